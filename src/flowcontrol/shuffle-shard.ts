/** Shuffle sharding of flows onto a level's queues (upstream's shufflesharding): the flow's hash and its hand. */

/** Shuffle sharding: `handSize` distinct queue indexes out of `deck`, determined by the hash. */
export function dealHand(hash: number, deck: number, handSize: number): number[] {
  // a partial Fisher–Yates shuffle of the deck 0..deck-1: only the positions it swapped are
  // kept (at most 2·handSize, in `at`/`card`), not the whole deck (every request of a queued
  // level deals its hand: a 128-queue deck built per request cost ~10 µs)
  const hand: number[] = [];
  const at: number[] = [];
  const card: number[] = [];
  const cardAt = (j: number): number => {
    const k = at.indexOf(j);
    return k < 0 ? j : card[k]!;
  };
  const put = (j: number, c: number): void => {
    const k = at.indexOf(j);
    if (k < 0) {
      at.push(j);
      card.push(c);
    } else card[k] = c;
  };
  let h = hash;
  for (let i = 0; i < handSize; i++) {
    const pick = i + (h % (deck - i));
    h = Math.floor(h / (deck - i));
    const picked = cardAt(pick);
    put(pick, cardAt(i));
    put(i, picked);
    hand.push(picked);
  }
  return hand;
}

/** FNV-1a over the flow key, widened to 48 bits for dealing. */
export function flowHash(key: string): number {
  let a = 0x811c9dc5,
    b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return (a >>> 0) * 0x10000 + ((b >>> 0) & 0xffff);
}

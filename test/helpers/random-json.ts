/** Random values of the JSON data model for round-trip tests of encoders. */

/** A deterministic generator of JSON-model values (with undefined members, toJSON dates and odd strings). */
export function randomValues(count: number): unknown[] {
  let seed = 7;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const scalar = (): unknown => {
    const r = rnd();
    if (r < 0.15) return null;
    if (r < 0.25) return rnd() < 0.5;
    if (r < 0.3) return undefined;
    if (r < 0.5) return Math.floor((rnd() - 0.5) * 2 ** (rnd() * 60));
    if (r < 0.6) return (rnd() - 0.5) * 1e6;
    if (r < 0.65) return new Date(Math.floor(rnd() * 1e12));
    return 'é"\n\\\u2028x<'.slice(0, Math.floor(rnd() * 7)) + 'x'.repeat(Math.floor(rnd() * 30));
  };
  const gen = (d: number): unknown => {
    const r = rnd();
    if (d > 5 || r < 0.3) return scalar();
    if (r < 0.6) return Array.from({ length: Math.floor(rnd() * 5) }, () => gen(d + 1));
    const o: Record<string, unknown> = {};
    for (let i = 0; i < rnd() * 5; i++) o[`k${Math.floor(rnd() * 30)}`] = gen(d + 1);
    return o;
  };
  return Array.from({ length: count }, () => gen(0));
}

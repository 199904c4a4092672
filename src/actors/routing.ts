/** Stable routing of resource types to shard actors: the same type always reaches the same actor. */
export function typeKeyOf(group: string, resource: string): string {
  return `${group}/${resource}`;
}

/** FNV-1a over the type key; stable across runs and processes. */
export function shardOf(typeKey: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < typeKey.length; i++) {
    h ^= typeKey.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

/** Stable routing of resource types to shard actors: the same type always reaches the same actor. */
/**
 * The storage identity of a served resource: `<group>/<resource>`, shared by all its versions.
 * One alias: Events of the events.<domain> group are the core Events, stored once as `/events`
 * (one object, one resourceVersion, one watch feed; the events.<domain> store converts).
 */
export function typeKeyOf(group: string, resource: string): string {
  if (resource === 'events' && group.startsWith('events.')) return '/events';
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

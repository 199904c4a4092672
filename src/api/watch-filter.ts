/**
 * Decides which event a watcher with selectors sees for a change, as upstream does: an object
 * that stops matching yields DELETED, one that starts matching yields ADDED.
 */
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Matcher {
  (labels: Record<string, string> | undefined, fields: Record<string, string>): boolean;
}

export function filterEvent(
  m: Matcher | undefined,
  type: EventType,
  cur: { labels: Record<string, string> | undefined; fields: Record<string, string> },
  prev: { labels: Record<string, string> | undefined; fields: Record<string, string> } | undefined,
): EventType | undefined {
  if (!m) return type;
  const now = m(cur.labels, cur.fields);
  if (type !== 'MODIFIED') return now ? type : undefined;
  const before = prev ? m(prev.labels, prev.fields) : false;
  if (now && before) return 'MODIFIED';
  if (now) return 'ADDED';
  if (before) return 'DELETED';
  return undefined;
}

/** One encoded watch event line (JSON stream framing: one object per line). */
export function eventLine(type: string, objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

/**
 * Decides which event a watcher with selectors sees for a change, as upstream's cacheWatcher
 * does: an object that stops matching yields DELETED, one that starts matching yields ADDED,
 * and a deletion is seen by the watchers its last stored state matched.
 */
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export type Matcher = (labels: Record<string, string> | undefined, fields: Record<string, string>) => boolean;

export interface Selectable {
  labels: Record<string, string> | undefined;
  fields: Record<string, string>;
}

export function filterEvent(
  m: Matcher | undefined,
  type: EventType,
  cur: Selectable,
  prev: Selectable | undefined,
): EventType | undefined {
  if (!m) return type;
  if (type === 'DELETED') {
    const last = prev ?? cur;
    return m(last.labels, last.fields) ? 'DELETED' : undefined;
  }
  const now = m(cur.labels, cur.fields);
  if (type === 'ADDED') return now ? 'ADDED' : undefined;
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

/**
 * The object a watcher receives: for an update that makes the object stop matching, upstream
 * sends DELETED carrying the previous state with the event's resourceVersion.
 */
export function objectFor(
  seen: EventType,
  original: EventType,
  json: string,
  prevJson: string | undefined,
  rv: number,
): string {
  if (seen !== 'DELETED' || original !== 'MODIFIED' || prevJson === undefined) return json;
  const prev = JSON.parse(prevJson);
  prev.metadata = { ...(prev.metadata ?? {}), resourceVersion: String(rv) };
  return JSON.stringify(prev);
}

/** Whether a change moved the object's selectable state (labels or selectable fields). */
export function selectableChanged(cur: Selectable, prev: Selectable | undefined): boolean {
  if (!prev) return false;
  return (
    JSON.stringify(cur.labels ?? {}) !== JSON.stringify(prev.labels ?? {}) ||
    JSON.stringify(cur.fields) !== JSON.stringify(prev.fields)
  );
}

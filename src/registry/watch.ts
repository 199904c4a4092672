/**
 * Watch start inside the owning actor: the spec's "resourceVersion semantics for watch" table,
 * streaming lists (sendInitialEvents) and history replay. Live events continue on the front
 * thread from `fromRV`.
 */
import { errors } from '../api/status.js';
import type { Op, WatchStart } from '../actors/protocol.js';
import { eventLine, filterEvent, type Matcher } from '../api/watch-filter.js';
import type { Store } from './store.js';
import type { Txn } from './txn.js';
import { matches, parseRV } from './list.js';

export function startWatch(store: Store, op: Extract<Op, { op: 'watch' }>, txn: Txn): WatchStart {
  const { cache, def, typeKey } = store.ctx;
  const opts = op.opts;
  const sel = store.selectors(opts);
  const m: Matcher | undefined = sel.label.empty && sel.field.empty ? undefined : (labels, fields) => matches(sel, { labels, fields });
  const rv = opts.resourceVersion ?? '';
  if (opts.sendInitialEvents !== undefined && opts.resourceVersionMatch !== 'NotOlderThan') {
    throw errors.invalid({ kind: 'ListOptions', group: 'meta.plat.io' }, [{ reason: 'FieldValueForbidden', field: 'sendInitialEvents', message: "Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to NotOlderThan" }]);
  }
  if (opts.resourceVersionMatch && opts.resourceVersionMatch !== 'NotOlderThan') {
    throw errors.badRequest(`resourceVersionMatch: Unsupported value: "${opts.resourceVersionMatch}" for watch`);
  }
  const base = { typeKey, kind: def.kind, apiVersion: store.apiVersion };
  const current = txn.currentRV();
  const initialState = opts.sendInitialEvents === true || (opts.sendInitialEvents === undefined && (rv === '' || rv === '0'));
  if (initialState) {
    if (rv !== '' && rv !== '0') store.checkNotTooLarge(parseRV(rv), txn);
    const initial: string[] = [];
    for (const [, e] of cache.scan(op.namespace, undefined)) {
      if (!m || m(e.labels, e.fields)) initial.push(eventLine('ADDED', store.ctx.def.kind === e.obj.kind && e.obj.apiVersion === store.apiVersion ? e.json : JSON.stringify({ ...e.obj, apiVersion: store.apiVersion })));
    }
    const streaming = opts.sendInitialEvents === true && opts.allowWatchBookmarks === true;
    return { ...base, initial, fromRV: current, initialEventsEndRV: streaming ? current : undefined };
  }
  const from = parseRV(rv);
  if (from < cache.oldestRV(txn.now)) {
    throw errors.gone(`too old resource version: ${from} (${cache.oldestRV(txn.now)})`);
  }
  if (from >= current) return { ...base, initial: [], fromRV: from };
  const initial: string[] = [];
  for (const ev of cache.eventsAfter(from)) {
    if (op.namespace && ev.entry.namespace !== op.namespace) continue;
    const t = filterEvent(m, ev.type, ev.entry, ev.prev);
    if (t) initial.push(eventLine(t, ev.entry.json));
  }
  return { ...base, initial, fromRV: current };
}

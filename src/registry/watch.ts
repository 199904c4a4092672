/**
 * Watch start inside the owning actor: the spec's "resourceVersion semantics for watch" table,
 * streaming lists (sendInitialEvents) and history replay. Live events continue on the front
 * thread from `fromRV`.
 *
 * The actor serves a batch against the state committed before the batch (`txn.currentRV()`);
 * every change of this type at or below that version is already in the cache and its history,
 * and every later one reaches the front thread's hub, so `fromRV = current` hands over
 * without a gap or a repeat.
 */
import { errors } from '../api/status.js';
import type { Op, WatchStart } from './ops.js';
import { filterEvent, objectFor, type Matcher } from '../api/watch-filter.js';
import { encodeEventObject, frameEvent, streamKey } from '../codec/watch-encoding.js';
import type { Entry } from '../storage/cacher/type-cache.js';
import type { Store } from './store.js';
import type { Txn } from './txn.js';
import { matches, parseRV } from './list.js';

type WatchOp = Extract<Op, { op: 'watch' }>;

/** upstream's validateWatchOptions, answered with 400 and every problem in the message */
export function validateWatchOptions(opts: WatchOp['opts']): void {
  const problems: string[] = [];
  const match = opts.resourceVersionMatch;
  if (opts.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    problems.push(
      'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    );
  }
  if (match) {
    if (opts.sendInitialEvents === undefined)
      problems.push(
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      );
    if (match !== 'NotOlderThan')
      problems.push(`resourceVersionMatch: Unsupported value: "${match}": supported values: "NotOlderThan"`);
    if (opts.continue)
      problems.push('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided');
  }
  if (problems.length) throw errors.badRequest(`invalid watch options: ${problems.join('; ')}`);
}

export function startWatch(store: Store, op: WatchOp, txn: Txn): WatchStart {
  const { cache, def, typeKey } = store.ctx;
  const opts = op.opts;
  validateWatchOptions(opts);
  const sel = store.selectors(opts);
  const m: Matcher | undefined =
    sel.label.empty && sel.field.empty ? undefined : (labels, fields) => matches(sel, { labels, fields });
  const rv = opts.resourceVersion ?? '';
  const noVersion = rv === '' || rv === '0';
  // a converted version's field labels are renamed: the hub matches the stored field set
  const fieldSelector = store.ctx.conversion && !sel.field.empty ? sel.field.toString() : undefined;
  const base = { typeKey, kind: def.kind, apiVersion: store.apiVersion, ...(fieldSelector ? { fieldSelector } : {}) };
  const current = txn.currentRV();
  // events framed in the watch's encoding; a Table view has column definitions on the first only
  const initial: (string | Uint8Array)[] = [];
  const push = (type: string, json: string, entry?: Entry) =>
    initial.push(
      frameEvent(
        op.enc,
        type,
        encodeEventObject(op.enc, { kind: def.kind, json, entry }, txn.now, initial.length === 0),
      ),
    );

  // Get State and Start at Most Recent / Any, and the streaming list (NotOlderThan rv).
  if (opts.sendInitialEvents === true || (opts.sendInitialEvents === undefined && noVersion)) {
    if (!noVersion) store.checkNotTooLarge(parseRV(rv), txn);
    const endBookmark = opts.sendInitialEvents === true && opts.allowWatchBookmarks === true;
    const end = { fromRV: current, initialEventsEndRV: endBookmark ? current : undefined };
    // views carry the time (Table age) and are framed per watch; other states are shared
    const shareKey = op.enc.view ? undefined : stateKey(store, op, current);
    // the front thread holds these events already: they do not cross again
    if (shareKey !== undefined && op.held?.includes(shareKey)) return { ...base, initial: [], shareKey, ...end };
    const shared = shareKey === undefined ? undefined : sharedState(store, current, shareKey);
    if (shared) return { ...base, initial: shared, shareKey, ...end };
    for (const [, e] of cache.scan(op.namespace, undefined)) {
      if (!m || m(e.labels, e.fields))
        push('ADDED', jsonAs(store, e), e.apiVersion === store.apiVersion ? e : undefined);
    }
    if (shareKey !== undefined) rememberState(store, current, shareKey, initial);
    return { ...base, initial, ...(shareKey !== undefined ? { shareKey } : {}), ...end };
  }
  // sendInitialEvents=false without a version: start now, no state.
  if (noVersion) return { ...base, initial: [], fromRV: current };

  // Start at Exact: every change after `from`, nothing before.
  const from = parseRV(rv);
  const oldest = cache.oldestRV(txn.now);
  if (from < oldest) throw errors.gone(`too old resource version: ${from} (${oldest})`);
  // a version not reached yet: live events after it (the stream waits for it)
  if (from >= current) return { ...base, initial: [], fromRV: from };
  for (const ev of cache.eventsAfter(from)) {
    if (ev.rv > current) break;
    if (op.namespace && ev.entry.namespace !== op.namespace) continue;
    const t = filterEvent(m, ev.type, ev.entry, ev.prev);
    if (t) push(t, objectFor(t, ev.type, jsonAs(store, ev.entry), ev.prev && jsonAs(store, ev.prev), ev.rv));
  }
  return { ...base, initial, fromRV: current };
}

/** The key of a shared initial state: type, version, namespace, framing, selectors, resourceVersion. */
function stateKey(store: Store, op: WatchOp, current: number): string {
  const { opts } = op;
  return `${store.ctx.typeKey}|${store.apiVersion}|${op.namespace}|${streamKey(op.enc)}|${opts.labelSelector ?? ''}|${opts.fieldSelector ?? ''}@${current}`;
}

/** The stored object as the requested version (same encoding the list and get use). */
function jsonAs(store: Store, e: Entry): string {
  return store.jsonOf(e);
}

/**
 * Initial states framed at the store's current version, by share key (issue 18 item 6): many
 * watches of one state are encoded once, and the same array in one batch reply crosses the
 * thread boundary once (structured clone keeps shared references). Forgotten when the version moves.
 */
const states = new WeakMap<Store, { rv: number; byKey: Map<string, (string | Uint8Array)[]> }>();
const MAX_STATES = 16;

function sharedState(store: Store, rv: number, key: string): (string | Uint8Array)[] | undefined {
  const s = states.get(store);
  return s && s.rv === rv ? s.byKey.get(key) : undefined;
}

function rememberState(store: Store, rv: number, key: string, initial: (string | Uint8Array)[]): void {
  let s = states.get(store);
  if (!s || s.rv !== rv) states.set(store, (s = { rv, byKey: new Map() }));
  if (s.byKey.size >= MAX_STATES) s.byKey.clear();
  s.byKey.set(key, initial);
}

/**
 * A batch's reply on the wire (see wire.ts): its change events and its plain results (a status
 * code and a body packed by pack.ts) as one Packed; results of other shapes (watches, errors,
 * pages, bodies in buffers of their own) are structured-cloned as before, in `rest`.
 */
import type { BatchReply, ChangeEvent, Result } from './protocol.js';
import { Packer, Unpacker } from './wire.js';

type CodeResult = Extract<Result, { code: number }>;

// every key of a ChangeEvent and of a code result is sent below: a new one fails to compile here
type EventKeysSent =
  | 'typeKey'
  | 'type'
  | 'rv'
  | 'namespace'
  | 'name'
  | 'json'
  | 'labels'
  | 'fields'
  | 'prevLabels'
  | 'prevFields'
  | 'prevJson'
  | 'encoded'
  | 'apiVersion'
  | 'publishedUs'
  | 'uid'
  | 'owners'
  | 'finalizers'
  | 'deleting'
  | 'expiresAt'
  | 'quota';
type ResultKeysSent = 'id' | 'code' | 'body' | 'contentType' | 'warnings' | 'contentEncoding' | 'bodyRef';
/** keys whose presence sends a result in `rest` */
type ResultKeysCloned = 'page' | 'ownBuffer';
export const EVERY_KEY_SENT: [Exclude<keyof ChangeEvent, EventKeysSent>] extends [never]
  ? [Exclude<keyof CodeResult, ResultKeysSent | ResultKeysCloned>] extends [never]
    ? true
    : never
  : never = true;

function putEvent(p: Packer, e: ChangeEvent): void {
  p.record();
  p.ref(e.typeKey);
  p.ref(e.type);
  p.num(e.rv);
  p.ref(e.namespace);
  p.put(e.name);
  p.put(e.json);
  p.map(e.labels);
  p.map(e.fields);
  p.map(e.prevLabels);
  p.map(e.prevFields);
  p.put(e.uid);
  p.ref(e.apiVersion);
  putRare(p, e);
}

/** The optional fields: which are set (a bit each, in RARE's order), then each set one as itself. */
function putRare(p: Packer, e: ChangeEvent): void {
  const { owners, finalizers, deleting, expiresAt, quota, prevJson, encoded, publishedUs } = e;
  const set =
    (owners !== undefined ? 1 : 0) |
    (finalizers !== undefined ? 2 : 0) |
    (deleting !== undefined ? 4 : 0) |
    (expiresAt !== undefined ? 8 : 0) |
    (quota !== undefined ? 16 : 0) |
    (prevJson !== undefined ? 32 : 0) |
    (encoded !== undefined ? 64 : 0) |
    (publishedUs !== undefined ? 128 : 0);
  p.num(set);
  if (set === 0) return;
  if (set & 1) p.ref(owners);
  if (set & 2) p.ref(finalizers);
  if (set & 4) p.ref(deleting);
  if (set & 8) p.ref(expiresAt);
  if (set & 16) p.ref(quota);
  if (set & 32) p.put(prevJson);
  if (set & 64) p.ref(encoded);
  if (set & 128) p.ref(publishedUs);
}

/** An event as changeEvent() built it: the same keys in the same order. */
function takeEvent(u: Unpacker): ChangeEvent {
  u.record();
  const e: ChangeEvent = {
    typeKey: u.ref(),
    type: u.ref<ChangeEvent['type']>(),
    rv: u.num(),
    namespace: u.ref(),
    name: u.take(),
    json: u.take(),
    labels: u.map(),
    fields: u.map()!,
    prevLabels: u.map(),
    prevFields: u.map(),
    uid: u.take(),
    apiVersion: u.ref(),
  };
  takeRare(u, e);
  return e;
}

/** The optional fields, set only when sent (as cloning leaves them absent), in changeEvent()'s order. */
function takeRare(u: Unpacker, e: ChangeEvent): void {
  const set = u.num();
  if (set === 0) return;
  if (set & 1) e.owners = u.ref<ChangeEvent['owners']>();
  if (set & 2) e.finalizers = u.ref<string[]>();
  if (set & 4) e.deleting = u.ref<boolean>();
  if (set & 8) e.expiresAt = u.ref<number>();
  if (set & 16) e.quota = u.ref<ChangeEvent['quota']>();
  if (set & 32) e.prevJson = u.take();
  if (set & 64) e.encoded = u.ref<ChangeEvent['encoded']>();
  if (set & 128) e.publishedUs = u.ref<number>();
}

/** A result with a status code and a body already packed into reply.bodies (or empty), and nothing else. */
function plain(r: Result): r is CodeResult {
  return 'code' in r && r.body === '' && r.page === undefined && r.ownBuffer === undefined;
}

function putResult(p: Packer, r: CodeResult): void {
  p.record();
  p.num(r.id);
  p.num(r.code);
  p.ref(r.contentType);
  p.ref(r.warnings);
  p.ref(r.contentEncoding);
  if (r.bodyRef) {
    p.num(r.bodyRef[0]);
    p.num(r.bodyRef[1]);
  } else p.num(-1);
}

function takeResult(u: Unpacker): Result {
  u.record();
  const id = u.num();
  const r: CodeResult = { id, code: u.num(), body: '', contentType: u.ref() };
  const warnings = u.ref<string[] | undefined>();
  if (warnings !== undefined) r.warnings = warnings;
  const contentEncoding = u.ref<'gzip' | undefined>();
  if (contentEncoding !== undefined) r.contentEncoding = contentEncoding;
  const at = u.num();
  if (at >= 0) r.bodyRef = [at, u.num()];
  return r;
}

/**
 * Packs a reply's results and events (after packBodies) into reply.wire, leaving both lists
 * empty; the buffers to transfer are unchanged (results in `rest` keep theirs).
 */
export function packReply(reply: BatchReply): void {
  const p = new Packer();
  const rest: Result[] = [];
  for (const r of reply.results) {
    if (plain(r)) {
      p.num(0);
      putResult(p, r);
    } else {
      p.num(1);
      rest.push(r);
    }
  }
  for (const e of reply.events) putEvent(p, e);
  reply.wire = { ...p.done(), results: reply.results.length, events: reply.events.length, rest };
  reply.results = [];
  reply.events = [];
}

/** Restores reply.results and reply.events from reply.wire (before unpackBodies). */
export function unpackReply(reply: BatchReply): void {
  const w = reply.wire;
  if (!w) return;
  const u = new Unpacker(w);
  const results: Result[] = new Array(w.results);
  let rest = 0;
  for (let i = 0; i < w.results; i++) results[i] = u.num() === 0 ? takeResult(u) : w.rest[rest++]!;
  const events: ChangeEvent[] = new Array(w.events);
  for (let i = 0; i < w.events; i++) events[i] = takeEvent(u);
  reply.results = results;
  reply.events = events;
  reply.wire = undefined;
}

/**
 * The helper thread of a large Protobuf LIST's first encoding (encode-helper.ts): receives chunks
 * of items' JSON texts as UTF-8 bytes, encodes each with the same text encoder as the actor
 * (text-encoder.ts), and answers the chunk's item bytes back to back in one buffer of their exact
 * size, transferred (no copy), with each item's length (-1: not encoded here, the actor encodes
 * it; -2: not sent). After each answer it counts one on the shared DONE cell and wakes the actor,
 * which may be waiting for it (Atomics.wait); when the thread ends, STATE says GONE.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { ProtobufCodec, parseApiVersion } from '../protobuf.js';
import { takeInto } from './wire-writer.js';
import { type Answer, type Chunk, DONE, GONE, type HelperData, READY, STATE } from './encode-helper-protocol.js';

const { port, flags: shared, slots, apiDomain, exitAt, nice } = workerData as HelperData;
const inputs = slots.map((b) => new Uint8Array(b));
const flags = new Int32Array(shared);

function signal(): void {
  Atomics.add(flags, DONE, 1);
  Atomics.notify(flags, DONE);
}

process.on('exit', () => {
  Atomics.store(flags, STATE, GONE);
  signal();
});

/**
 * This thread alone at `nice` (Linux: setpriority(PRIO_PROCESS, tid) applies to the thread tid;
 * /proc/thread-self names it). Elsewhere, or refused, the thread keeps the process's priority.
 */
if (nice !== undefined) {
  let set: number | undefined;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(tid, nice);
    set = getPriority(tid);
  } catch {
    // not Linux, or not allowed: the same work at the process's priority
  }
  // before the schema load (the first message of a helper with no `nice` says it is ready)
  parentPort?.postMessage({ nice: set });
}

const codec = new ProtobufCodec(undefined, apiDomain ? { apiDomain } : {});
codec.typeFor('', 'v1', 'Pod'); // the schema, loaded before the first chunk

let scratch = Buffer.allocUnsafeSlow(1024 * 1024);
let at = 0;

/** take()'s allocator: the chunk's items back to back in the scratch (grown, keeping what it holds). */
function alloc(n: number): Uint8Array {
  if (at + n > scratch.length) {
    const next = Buffer.allocUnsafeSlow(Math.max(scratch.length * 2, at + n));
    scratch.copy(next, 0, 0, at);
    scratch = next;
  }
  const view = scratch.subarray(at, at + n);
  at += n;
  return view;
}

function encodeChunk(c: Chunk): Answer {
  const data = inputs[c.slot]!;
  const lens = new Int32Array(c.count);
  at = 0;
  const { group, version } = parseApiVersion(c.apiVersion);
  const type = codec.typeFor(group, version, c.kind);
  takeInto(alloc, () => {
    let start = 0;
    for (let i = 0; i < c.count; i++) {
      const end = c.ends[i]!;
      if (end === start) lens[i] = -2;
      else {
        const before = at;
        let bytes: Uint8Array | undefined;
        try {
          bytes = type && codec.encodeJsonBytes(type, data.subarray(start, end));
        } catch {
          bytes = undefined;
        }
        lens[i] = bytes ? bytes.byteLength : -1;
        if (!bytes) at = before;
      }
      start = end;
    }
  });
  // shared, like the actor's own slabs (item-slabs.ts): posted without a transfer, never counted as external memory
  const out = new SharedArrayBuffer(at);
  scratch.copy(new Uint8Array(out), 0, 0, at);
  return { id: c.id, out, lens };
}

let received = 0;
port.on('message', (c: Chunk) => {
  if (exitAt !== undefined && ++received >= exitAt) process.exit(1);
  const answer = encodeChunk(c);
  port.postMessage(answer, [answer.lens.buffer as ArrayBuffer]);
  signal();
});

Atomics.store(flags, STATE, READY);
parentPort?.postMessage('ready');

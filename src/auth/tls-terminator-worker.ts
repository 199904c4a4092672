/**
 * Worker-thread entry of the TLS front: runs the node:tls terminator off the uWS front thread,
 * so TLS and relaying use another core instead of competing with request handling.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startTlsTerminator, type TerminatorOptions } from './tls-terminator.js';

const o = workerData as TerminatorOptions;
startTlsTerminator({
  ...o,
  key: Buffer.from(o.key),
  cert: Buffer.from(o.cert),
  clientCA: Buffer.from(o.clientCA),
  requestHeaderCA: o.requestHeaderCA ? Buffer.from(o.requestHeaderCA) : undefined,
}).then(
  ({ port }) => parentPort!.postMessage({ port }),
  (e: Error) => parentPort!.postMessage({ error: e.message }),
);

/**
 * Piscina entry of the front thread's body decoder (src/codec/body-decoder.ts): decodes one
 * large request body off the front thread. workerData is { apiDomain }; each task is a Body,
 * answered with the decoded object or the Status decodeBody threw (plain data both ways).
 */
import { workerData } from 'node:worker_threads';
import { configureProtobuf, decodeBody } from '../src/codec/codec.js';
import { toStatus } from '../src/api/status.js';
import type { Body } from '../src/actors/protocol.js';
import type { DecodeReply } from '../src/codec/body-decoder.js';

configureProtobuf((workerData as { apiDomain: string }).apiDomain);

export default function decode(body: Body): DecodeReply {
  try {
    return { value: decodeBody(body) };
  } catch (e) {
    return { error: toStatus(e) };
  }
}

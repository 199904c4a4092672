/**
 * Everything of @bufbuild/cel (and the two protobuf well-known-type helpers CEL values need) in
 * one module, loaded only through ./lazy.ts: loading the CEL runtime costs ~130 ms of CPU per
 * thread, and a thread with no CEL expression to run (a shard actor without validation rules, a
 * server without admission policies or webhook match conditions) never pays it.
 */
export * from '@bufbuild/cel';
export { strings } from '@bufbuild/cel/ext';
export { durationFromMs, timestampFromDate } from '@bufbuild/protobuf/wkt';

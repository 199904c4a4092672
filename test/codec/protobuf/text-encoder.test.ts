/**
 * The text encoder's byte reader (src/codec/protobuf/text-scan.ts, text-values.ts, text-encoder.ts):
 * the UTF-8 of the text copied as string and raw JSON bytes, escapes decoded, the key order
 * predicted per type, UTC times read in place, the scratch reused between texts — each against the
 * converter and protobufjs byte for byte, or left to the object path (undefined) where the text is
 * not JSON.stringify's output.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ProtobufCodec } from '../../../src/codec/protobuf.js';
import { parseTime } from '../../../src/codec/protobuf/time.js';
import * as scan from '../../../src/codec/protobuf/text-scan.js';
import { utcSeconds } from '../../../src/codec/protobuf/text-values.js';
import { Rng } from '../../fuzz/rng.js';

const codec = new ProtobufCodec();
const pod = (): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL('../../../../test/fixtures/protobuf/pod.json', import.meta.url), 'utf8'));
const stored = (obj: Record<string, unknown>): string => {
  const { kind, apiVersion, ...rest } = obj;
  return JSON.stringify({ kind, apiVersion, ...rest });
};
const hex = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('hex') : undefined);

/** The text path answers, and its bytes are the reference's. */
function assertExact(obj: Record<string, unknown>, what: string): void {
  const text = codec.encodeJsonText(stored(obj), obj.apiVersion as string);
  assert.ok(text, `${what}: the text path answered`);
  assert.equal(hex(text), hex(codec.referenceMessage(obj)), what);
}

const LONG = 'x'.repeat(200);
const STRINGS = [
  'plain',
  'é-accent',
  'emoji 😀 pair',
  '日本語のラベル',
  'quote " backslash \\ slash /',
  'newline\ntab\tcontrol\u0001',
  `${LONG}é`,
  `${'ü'.repeat(70)}`, // 70 chars, 140 bytes: a 2-byte length though under 128 chars
  'y'.repeat(20_000),
  '',
];

describe('text encoder: strings, maps and raw JSON as UTF-8 bytes', () => {
  it('writes non-ASCII, escaped, long and empty strings byte for byte', () => {
    for (const s of STRINGS) {
      const obj = pod();
      const meta = obj.metadata as Record<string, unknown>;
      meta.name = s;
      meta.labels = { [s || 'k']: s, plain: 'v', [`k-${s.slice(0, 10)}`]: null };
      meta.annotations = { note: s };
      (obj.spec as { containers: { image: string }[] }).containers[0]!.image = s;
      assertExact(obj, JSON.stringify(s.slice(0, 30)));
    }
  });

  it('copies raw JSON (FieldsV1) with nested escapes and non-ASCII keys as its own bytes', () => {
    const obj = pod();
    const meta = obj.metadata as Record<string, unknown>;
    meta.managedFields = [
      {
        manager: 'm',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-27T08:04:55Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:é😀': {}, 'k:{"name":"c\\\\"}': { '.': {} } } } },
      },
    ];
    assertExact(obj, 'fieldsV1');
  });

  it('encodes objects of one kind with their keys in changing orders (the prediction misses) byte for byte', () => {
    const rng = Rng.forCase(31, 0);
    for (let i = 0; i < 200; i++) {
      const obj = pod();
      const meta = obj.metadata as Record<string, unknown>;
      const entries = Object.entries(meta);
      for (let k = entries.length - 1; k > 0; k--) {
        const j = rng.int(k + 1);
        [entries[k], entries[j]] = [entries[j]!, entries[k]!];
      }
      obj.metadata = Object.fromEntries(entries);
      if (i % 3 === 0) delete (obj.metadata as Record<string, unknown>).labels;
      assertExact(obj, `order ${i}`);
    }
  });
});

describe('text encoder: keys matched off the prediction', () => {
  it('matches an escaped key by its value and an unknown key by none, byte for byte', () => {
    const text = stored(pod());
    for (const odd of [
      text.replace('"uid":', '"u\\u0069d":'), // valid JSON that decodes to a known key
      text.replace('"uid":', '"uidx":'), // a key no field has: skipped
      text.replace('"labels":{', '"labels\\n":{'), // an escaped unknown key
    ]) {
      const obj = JSON.parse(odd) as Record<string, unknown>;
      assert.equal(hex(codec.encodeJsonText(odd, 'v1')), hex(codec.referenceMessage(obj)), odd.slice(0, 200));
    }
  });
});

describe('text encoder: numbers and times', () => {
  it('writes integers, large and negative numbers, and times in every form byte for byte', () => {
    const times = [
      '2026-11-27T08:04:55Z',
      '2024-02-29T23:59:59Z', // day over 28: parseTime
      '1970-01-01T00:00:00Z',
      '2026-11-27T08:04:55+02:00',
      '1969-12-31T23:59:59Z',
    ];
    const numbers = [0, 1, -1, 127, 128, 2 ** 31 - 1, -(2 ** 31), 2 ** 53 - 1, 123456789012345, 1e15];
    for (const [i, time] of times.entries()) {
      const obj = pod();
      (obj.metadata as Record<string, unknown>).creationTimestamp = time;
      (obj.metadata as Record<string, unknown>).generation = numbers[i % numbers.length];
      (obj.spec as Record<string, unknown>).terminationGracePeriodSeconds = numbers[(i + 3) % numbers.length];
      (obj.spec as Record<string, unknown>).priority = numbers[(i + 5) % numbers.length];
      assertExact(obj, time);
    }
  });

  it('reads "YYYY-MM-DDTHH:MM:SSZ" in place as parseTime does, and leaves doubtful ones to it', () => {
    const rng = Rng.forCase(32, 0);
    const two = (n: number): string => String(n).padStart(2, '0');
    for (let i = 0; i < 5000; i++) {
      const y = 1 + rng.int(9998);
      const s = `${String(y).padStart(4, '0')}-${two(1 + rng.int(12))}-${two(1 + rng.int(31))}T${two(rng.int(25))}:${two(rng.int(61))}:${two(rng.int(61))}Z`;
      scan.begin(JSON.stringify(s));
      const fast = utcSeconds(0, s.length + 2);
      let slow: number | undefined;
      try {
        slow = parseTime(s, false).seconds;
      } catch {
        slow = undefined;
      }
      if (fast) assert.equal(fast.seconds, slow, s);
    }
    scan.begin('"2026-02-29T00:00:00Z"');
    assert.equal(utcSeconds(0, 22), undefined, 'a day over 28 is left to parseTime');
  });
});

describe('text encoder: texts that are not JSON.stringify output', () => {
  it('leaves lone surrogates, whitespace in raw JSON and truncated texts to the object path', () => {
    const text = stored(pod());
    const long = stored({ ...pod(), metadata: { name: 'n', annotations: { a: 'z'.repeat(5000) } } });
    assert.ok(codec.encodeJsonText(long, 'v1'));
    for (const bad of [
      text.replace('"name":"', '"name":"\uD800'), // a raw lone surrogate (JSON.stringify escapes it)
      text.replace('"f:metadata":{', '"f:metadata": {'),
      text.slice(0, text.length - 3), // after a longer text: the scratch's stale bytes are not read
      text.replace('"restartPolicy":"Always"', '"restartPolicy":"Always" '),
    ]) {
      assert.equal(codec.encodeJsonText(long, 'v1') !== undefined, true);
      assert.equal(codec.encodeJsonText(bad, 'v1'), undefined, bad.slice(0, 60));
    }
  });
});

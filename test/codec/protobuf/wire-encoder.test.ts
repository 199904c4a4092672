/**
 * The direct JSON → wire encoder (src/codec/protobuf/wire-encoder.ts) against the converter and
 * protobufjs path it replaces: byte for byte on every built-in kind's samples and on seeded
 * mutations of them (non-ASCII and lone-surrogate strings, long values, extreme numbers, odd map
 * keys, nulls, wrong types), and the same error where the converter refuses a value.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ProtobufCodec } from '../../../src/codec/protobuf.js';
import { allKinds, apiVersionOf, fullSample, minimalSample } from '../../fixtures/protobuf/samples.js';
import { Rng } from '../../fuzz/rng.js';

const codec = new ProtobufCodec();
const FIXTURES = ['configmap', 'crd', 'deployment', 'event', 'lease', 'pod', 'secret', 'service'];
const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../../../test/fixtures/protobuf/${name}.json`, import.meta.url), 'utf8'));
const kinds = allKinds().filter(({ gvk }) => codec.typeFor(gvk.group, gvk.version, gvk.kind));

/** Both paths' answers: the bytes as hex, or the error's message. */
function both(obj: unknown): { direct: string; reference: string } {
  const run = (f: () => Uint8Array): string => {
    try {
      return Buffer.from(f()).toString('hex');
    } catch (e) {
      return `error: ${(e as Error).message}`;
    }
  };
  return { direct: run(() => codec.encodeMessage(obj)), reference: run(() => codec.referenceMessage(obj)) };
}

function assertSame(obj: unknown, what: string): void {
  const { direct, reference } = both(obj);
  assert.equal(direct, reference, what);
}

describe('direct wire encoding equals the converter and protobufjs', () => {
  it("writes every built-in kind's minimal and full samples byte for byte, without falling back", () => {
    assert.ok(kinds.length > 150);
    for (const { def, gvk } of kinds) {
      for (const obj of [minimalSample(def, gvk), fullSample(def, gvk)]) {
        const what = `${apiVersionOf(gvk)} ${gvk.kind}`;
        const direct = codec.directMessage(obj);
        const unions = /apiextensions/.test(apiVersionOf(gvk)); // the schema unions are delegated, still direct
        assert.ok(direct || unions, `${what}: the direct path answered`);
        assert.equal(
          Buffer.from(codec.encodeMessage(obj)).toString('hex'),
          Buffer.from(codec.referenceMessage(obj)).toString('hex'),
          what,
        );
      }
    }
  });

  it('writes the hand-made fixtures byte for byte', () => {
    for (const name of FIXTURES) {
      const obj = fixture(name);
      assert.ok(codec.directMessage(obj), name);
      assertSame(obj, name);
    }
  });

  it('answers an own buffer of exactly the message size', () => {
    const bytes = codec.encodeMessage(fixture('pod'));
    assert.equal(bytes.byteOffset, 0);
    assert.equal(bytes.buffer.byteLength, bytes.byteLength);
  });

  it('writes lengths of several bytes (content of 128 bytes and more, nested) as protobufjs does', () => {
    const cm = fixture('configmap');
    for (const n of [127, 128, 129, 16383, 16384, 70000]) {
      const obj = { ...cm, data: { big: 'x'.repeat(n), [`k${n}`]: 'é'.repeat(n >> 1) } };
      assertSame(obj, `value of ${n} chars`);
    }
  });
});

const STRINGS = [
  '',
  'a',
  'é',
  '日本語',
  '😀',
  '\uD800',
  'x\uDC00y',
  '\u0000',
  'a'.repeat(40),
  '€'.repeat(50),
  '\uD83D',
];
const NUMBERS = [
  0,
  1,
  -1,
  127,
  128,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 32,
  2 ** 40 + 3,
  -(2 ** 40),
  2 ** 53 - 1,
  0.5,
  -2.25,
  1e21,
];
const KEYS = ['a', '10', '2', '__proto__', 'constructor', 'é', '😀', ''];

/** A copy of value with one random change somewhere in it. */
function mutate(rng: Rng, value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) {
    if (value.length === 0 || rng.chance(0.1)) return rng.chance(0.5) ? [] : [null];
    const i = rng.int(value.length);
    return value.map((x, j) => (j === i ? mutate(rng, x, depth + 1) : x));
  }
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    const out: Record<string, unknown> = {};
    for (const k of keys)
      Object.defineProperty(out, k, {
        value: (value as Record<string, unknown>)[k],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    if (keys.length === 0 || rng.chance(0.15)) {
      Object.defineProperty(out, rng.pick(KEYS), {
        value: rng.chance(0.3) ? null : rng.pick(STRINGS),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return out;
    }
    const k = rng.pick(keys);
    out[k] = rng.chance(0.05) ? null : mutate(rng, out[k], depth + 1);
    return out;
  }
  if (typeof value === 'string') return rng.chance(0.8) ? rng.pick(STRINGS) : rng.pick(NUMBERS);
  if (typeof value === 'number') return rng.chance(0.85) ? rng.pick(NUMBERS) : rng.pick(STRINGS);
  if (typeof value === 'boolean') return rng.chance(0.8) ? !value : 'true';
  return value;
}

describe('direct wire encoding on mutated objects', () => {
  it('answers the same bytes, or the same error, for 2,000 seeded mutations of the samples', () => {
    const base = [
      ...FIXTURES.map(fixture),
      ...kinds.filter((_, i) => i % 3 === 0).map(({ def, gvk }) => fullSample(def, gvk)),
    ];
    let encoded = 0;
    for (let i = 0; i < 2000; i++) {
      const rng = Rng.forCase(24, i);
      let obj = base[rng.int(base.length)] as unknown;
      for (let n = 1 + rng.int(3); n > 0; n--) obj = mutate(rng, obj);
      const rec = obj as Record<string, unknown>;
      const { direct, reference } = both(obj);
      assert.equal(direct, reference, `case ${i}: ${String(rec.kind)} ${JSON.stringify(obj).slice(0, 300)}`);
      if (!direct.startsWith('error')) encoded++;
    }
    assert.ok(encoded > 600, `${encoded} of the mutations encoded`);
  });
});

/** An object's JSON text as the store writes it (kind first, then apiVersion: registry/read-store.ts entryOf). */
const storedText = (obj: Record<string, unknown>): string => {
  const { kind, apiVersion, ...rest } = obj;
  return JSON.stringify({ kind, apiVersion, ...rest });
};
const hex = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('hex') : undefined);

describe('wire encoding from the JSON text equals the converter and protobufjs', () => {
  it("writes every built-in kind's samples and the fixtures byte for byte from their text", () => {
    const objs = [
      ...FIXTURES.map(fixture),
      ...kinds.flatMap(({ def, gvk }) => [minimalSample(def, gvk), fullSample(def, gvk)]),
    ];
    for (const obj of objs) {
      const what = `${String(obj.apiVersion)} ${String(obj.kind)}`;
      const text = codec.encodeJsonText(storedText(obj), obj.apiVersion as string);
      assert.ok(text, `${what}: the text path answered`);
      assert.equal(hex(text), hex(codec.referenceMessage(obj)), what);
      assert.equal(text.buffer.byteLength, text.byteLength, `${what}: an own buffer`);
    }
  });

  it('answers the same bytes for 2,000 seeded mutations, or leaves them to the object path', () => {
    const base = [
      ...FIXTURES.map(fixture),
      ...kinds.filter((_, i) => i % 3 === 1).map(({ def, gvk }) => fullSample(def, gvk)),
    ];
    let fromText = 0;
    for (let i = 0; i < 2000; i++) {
      const rng = Rng.forCase(26, i);
      let obj = base[rng.int(base.length)] as unknown;
      for (let n = 1 + rng.int(3); n > 0; n--) obj = mutate(rng, obj);
      const rec = obj as Record<string, unknown>;
      const { reference } = both(obj);
      const text =
        typeof rec.apiVersion === 'string' ? codec.encodeJsonText(storedText(rec), rec.apiVersion) : undefined;
      if (text === undefined) continue;
      fromText++;
      assert.equal(hex(text), reference, `case ${i}: ${storedText(rec).slice(0, 300)}`);
    }
    assert.ok(fromText > 600, `${fromText} of the mutations from the text`);
  });

  it('leaves texts it cannot read exactly to the object path', () => {
    const cm = fixture('configmap');
    const text = storedText(cm);
    for (const bad of [
      text.replace('{"kind"', '{ "kind"'), // not JSON.stringify's output
      text.replace('"kind":"ConfigMap",', ''), // the kind not first
      `${text} `,
      text.slice(0, -1),
    ])
      assert.equal(codec.encodeJsonText(bad, 'v1'), undefined, bad.slice(0, 40));
  });
});

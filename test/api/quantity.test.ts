import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  QUANTITY_FORMAT_ERROR,
  QUANTITY_NUMERIC_ERROR,
  QUANTITY_SUFFIX_ERROR,
  canonicalQuantity,
  parseQuantityString,
  quantityString,
  type Quantity,
  type QuantityFormat,
} from '../../src/api/quantity.js';

const D: QuantityFormat = 'DecimalSI';
const B: QuantityFormat = 'BinarySI';
const X: QuantityFormat = 'DecimalExponent';
const MAX = (1n << 63n) - 1n;

function parsed(s: string): Quantity {
  const r = parseQuantityString(s);
  if ('error' in r) assert.fail(`${s}: ${r.error}`);
  return r.quantity;
}

/** mantissa * 10^exponent with trailing zeros folded into the exponent, for value comparisons */
function norm(m: bigint, e: number): string {
  if (m === 0n) return '0';
  while (m % 10n === 0n) {
    m /= 10n;
    e++;
  }
  return `${m}e${e}`;
}

const canon = (s: string) => quantityString(parsed(s));

// upstream TestQuantityParse: [input, mantissa, exponent, format]
const parseCases: [string, bigint, number, QuantityFormat][] = [
  ['0', 0n, 0, D],
  ['0n', 0n, 0, D],
  ['0u', 0n, 0, D],
  ['0m', 0n, 0, D],
  ['0Ki', 0n, 0, B],
  ['0k', 0n, 0, D],
  ['0Mi', 0n, 0, B],
  ['0M', 0n, 0, D],
  ['0Gi', 0n, 0, B],
  ['0G', 0n, 0, D],
  ['0Ti', 0n, 0, B],
  ['0T', 0n, 0, D],
  ['1', 1n, 0, D],
  ['1Ki', 1024n, 0, B],
  ['8Ki', 8n * 1024n, 0, B],
  ['7Mi', 7n * 1024n ** 2n, 0, B],
  ['6Gi', 6n * 1024n ** 3n, 0, B],
  ['5Ti', 5n * 1024n ** 4n, 0, B],
  ['4Pi', 4n * 1024n ** 5n, 0, B],
  ['3Ei', 3n * 1024n ** 6n, 0, B],
  ['10Ti', 10n * 1024n ** 4n, 0, B],
  ['100Ti', 100n * 1024n ** 4n, 0, B],
  ['5n', 5n, -9, D],
  ['4u', 4n, -6, D],
  ['3m', 3n, -3, D],
  ['9', 9n, 0, D],
  ['8k', 8n, 3, D],
  ['50k', 5n, 4, D],
  ['7M', 7n, 6, D],
  ['6G', 6n, 9, D],
  ['5T', 5n, 12, D],
  ['40T', 4n, 13, D],
  ['300T', 3n, 14, D],
  ['2P', 2n, 15, D],
  ['1E', 1n, 18, D],
  ['1E-3', 1n, -3, X],
  ['1e3', 1n, 3, X],
  ['1E6', 1n, 6, X],
  ['1e9', 1n, 9, X],
  ['1E12', 1n, 12, X],
  ['1e15', 1n, 15, X],
  ['1E18', 1n, 18, X],
  ['1e14', 1n, 14, X],
  ['1e13', 1n, 13, X],
  ['100.035k', 100035n, 0, D],
  ['0.001', 1n, -3, D],
  ['0.0005k', 5n, -1, D],
  ['0.005', 5n, -3, D],
  ['0.05', 5n, -2, D],
  ['0.5', 5n, -1, D],
  ['0.00050k', 5n, -1, D],
  ['0.00500', 5n, -3, D],
  ['0.05000', 5n, -2, D],
  ['0.50000', 5n, -1, D],
  ['0.5e0', 5n, -1, X],
  ['0.5e-1', 5n, -2, X],
  ['0.5e-2', 5n, -3, X],
  ['10.035M', 10035n, 3, D],
  ['1.2e3', 12n, 2, X],
  ['1.3E+6', 13n, 5, X],
  ['1.40e9', 14n, 8, X],
  ['1.53E12', 153n, 10, X],
  ['1.6e15', 16n, 14, X],
  ['1.7E18', 17n, 17, X],
  ['9.01', 901n, -2, D],
  ['8.1k', 81n, 2, D],
  ['7.123456M', 7123456n, 0, D],
  ['6.987654321G', 6987654321n, 0, D],
  ['5.444T', 5444n, 9, D],
  ['40.1T', 401n, 11, D],
  ['300.2T', 3002n, 11, D],
  ['2.5P', 25n, 14, D],
  ['1.01E', 101n, 16, D],
  ['3.001n', 4n, -9, D],
  ['1.1E-9', 2n, -9, X],
  ['0.0000000001', 1n, -9, D],
  ['0.0000000005', 1n, -9, D],
  ['0.00000000050', 1n, -9, D],
  ['0.5e-9', 1n, -9, X],
  ['0.9n', 1n, -9, D],
  ['0.00000012345', 124n, -9, D],
  ['0.00000012354', 124n, -9, D],
  ['9Ei', MAX, 0, B],
  ['9223372036854775807Ki', MAX, 0, B],
  ['12E', 12n, 18, D],
  ['100.035Ki', 10243584n, -2, B],
  ['0.5Mi', 524288n, 0, B],
  ['0.05Gi', 536870912n, -1, B],
  ['0.025Ti', 274877906944n, -1, B],
  ['0.000000000001Ki', 2n, -9, D],
  ['.001', 1n, -3, D],
  ['.0001k', 100n, -3, D],
  ['1.', 1n, 0, D],
  ['1.G', 1n, 9, D],
];

test('parse: values and formats of upstream TestQuantityParse, also negated and with an explicit +', () => {
  for (const [input, m, e, format] of parseCases) {
    const q = parsed(input);
    assert.equal(norm(q.mantissa, q.exponent), norm(m, e), input);
    assert.equal(q.format, format, input);
    const neg = parsed('-' + input);
    assert.equal(norm(neg.mantissa, neg.exponent), norm(-m, e), '-' + input);
    assert.equal(neg.format, format, '-' + input);
    const plus = parsed('+' + input);
    assert.equal(norm(plus.mantissa, plus.exponent), norm(m, e), '+' + input);
  }
});

test('parse: upstream invalid inputs fail with its errors', () => {
  for (const s of ['1.1.M', '1+1.0M', 'aoeu', '-3.01e-', ' 1', '1 ', '', 'lots', '1 Gi', '1.5.5', 'true']) {
    assert.deepEqual(Object.hasOwn(parseQuantityString(s), 'error'), true, s);
  }
  for (const s of ['1.1.M', '0.1am', 'aoeu', ' 1', '1 ', '', '1.5.5', '1e3.5'])
    assert.deepEqual(parseQuantityString(s), { error: QUANTITY_FORMAT_ERROR }, s);
  for (const s of ['0.1mi', '.5i', '1i', '-3.01i', '32MMi', '1e', '1Mi3', '1-', '--1', '1ee3']) {
    assert.deepEqual(parseQuantityString(s), { error: QUANTITY_SUFFIX_ERROR }, s);
  }
  // the inf.Dec path needs a digit (upstream's decode corpus: "Pi", ".e-10" fail, "Ki", "e-9" are 0)
  for (const s of ['Pi', '.Ei', '.e-10', 'e-10'])
    assert.deepEqual(parseQuantityString(s), { error: QUANTITY_NUMERIC_ERROR }, s);
  for (const s of ['Ki', '.Ki', 'e-9', '.', '-', '+', '0.0Pi', '0e-10']) assert.equal(canon(s), '0', s);
});

// upstream TestQuantityString: [mantissa, exponent, format, canonical, alternate spelling]
const stringCases: [bigint, number, QuantityFormat, string, string][] = [
  [1024n ** 3n, 0, B, '1Gi', '1024Mi'],
  [300n * 1024n ** 2n, 0, B, '300Mi', '307200Ki'],
  [6n * 1024n, 0, B, '6Ki', ''],
  [1001n * 1024n ** 3n, 0, B, '1001Gi', '1025024Mi'],
  [1024n ** 4n, 0, B, '1Ti', '1024Gi'],
  [5n, 0, B, '5', '5000m'],
  [500n, -3, B, '500m', '0.5'],
  [1n, 9, D, '1G', '1000M'],
  [1000n, 6, D, '1G', '0.001T'],
  [1000000n, 3, D, '1G', ''],
  [1000000000n, 0, D, '1G', ''],
  [1n, -3, D, '1m', '1000u'],
  [80n, -3, D, '80m', ''],
  [1080n, -3, D, '1080m', '1.08'],
  [108n, -2, D, '1080m', '1080000000n'],
  [10800n, -4, D, '1080m', ''],
  [300n, 6, D, '300M', ''],
  [1n, 12, D, '1T', ''],
  [1n, 18, D, '1E', ''],
  [1n, 21, D, '1e21', '1000E'],
  [5n, 21, D, '5e21', '5000E'],
  [1n, 24, D, '1e24', '1000000E'],
  [1234567n, 6, D, '1234567M', ''],
  [1234567n, -3, B, '1234567m', ''],
  [3n, 3, D, '3k', ''],
  [1025n, 0, B, '1025', ''],
  [0n, 0, D, '0', ''],
  [0n, 0, B, '0', ''],
  [1n, 9, X, '1e9', '.001e12'],
  [1n, -3, X, '1e-3', '0.001e0'],
  [1n, -9, X, '1e-9', '1000e-12'],
  [80n, -3, X, '80e-3', ''],
  [300n, 6, X, '300e6', ''],
  [1n, 12, X, '1e12', ''],
  [1n, 3, X, '1e3', ''],
  [3n, 3, X, '3e3', ''],
  [0n, 0, X, '0', '00'],
  [1n, -9, D, '1n', ''],
  [80n, -9, D, '80n', ''],
  [1080n, -9, D, '1080n', ''],
  [108n, -8, D, '1080n', ''],
  [10800n, -10, D, '1080n', ''],
  [1n, -6, D, '1u', ''],
  [80n, -6, D, '80u', ''],
  [1080n, -6, D, '1080u', ''],
];

test('String: upstream TestQuantityString, its alternate spellings and negations', () => {
  for (const [mantissa, exponent, format, expect, alternate] of stringCases) {
    assert.equal(quantityString({ mantissa, exponent, format }), expect, `${mantissa}e${exponent} ${format}`);
    assert.equal(canon(expect), expect, `canonical ${expect} parses to itself`);
    if (alternate) assert.equal(canon(alternate), expect, alternate);
    if (mantissa !== 0n)
      assert.equal(quantityString({ mantissa: -mantissa, exponent, format }), '-' + expect, `-${expect}`);
  }
});

test('String: a BinarySI whole number that is no multiple of 1024 prints without suffix (upstream TestBinarySIZeroExponentString)', () => {
  assert.equal(quantityString({ mantissa: 2000n, exponent: 0, format: B }), '2000');
  assert.equal(quantityString({ mantissa: -2000n, exponent: 0, format: B }), '-2000');
});

test('String: upstream TestQuantityParseEmit, also negated', () => {
  const cases: [string, string][] = [
    ['1Ki', '1Ki'],
    ['1Mi', '1Mi'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1000M', '1G'],
    ['.001Ki', '1024m'],
    ['.000001Ki', '1024u'],
    ['.000000001Ki', '1024n'],
    ['.000000000001Ki', '2n'],
  ];
  for (const [input, expect] of cases) {
    assert.equal(canon(input), expect, input);
    assert.equal(canon('-' + input), '-' + expect, '-' + input);
  }
});

test('String: the request spellings the server canonicalizes', () => {
  const cases: [unknown, string][] = [
    ['1000m', '1'],
    ['0.1', '100m'],
    ['1.5', '1500m'],
    ['1000', '1k'],
    ['1.2k', '1200'],
    ['12000', '12k'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['1Ki', '1Ki'],
    ['1023', '1023'],
    ['0.5Ki', '512'],
    ['1.5Ki', '1536'],
    ['100m', '100m'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['1e4', '10e3'],
    ['0.5e0', '500e-3'],
    ['-0', '0'],
    ['.5', '500m'],
    ['2048Ki', '2Mi'],
    ['1.1Ki', '1126400m'],
    ['-1.5Ki', '-1536'],
    ['-1024Ki', '-1Mi'],
    ['9Ei', '9223372036854775807'],
    ['-9Ei', '-9223372036854775807'],
    ['12345678901234567890', '12345678901234567890'],
    ['0.9n', '1n'],
    ['-0.9n', '-1n'],
    ['1e-1000', '1e-9'],
    ['2000m', '2'],
    [1, '1'],
    [0.5, '500m'],
    [2000, '2k'],
    [1.5, '1500m'],
    [0, '0'],
    ['  1Gi\n', '1Gi'],
  ];
  for (const [input, expect] of cases) assert.deepEqual(canonicalQuantity(input), { value: expect }, String(input));
});

test('String: an input upstream parses as already canonical is echoed as written', () => {
  // upstream's int64 parse path caches the input when its digits are canonical, sign and zeros included
  for (const s of ['+1', '01', '5.', '1.G', '1E3', '1e+3', '+1Ki', '1.500k', '1025Mi']) assert.equal(canon(s), s, s);
  for (const [s, expect] of <[string, string][]>[
    ['+1000', '1k'],
    ['01000m', '1'],
    ['1.0', '1'],
    ['0.10', '100m'],
    ['1024Ki', '1Mi'],
  ])
    assert.equal(canon(s), expect, s);
});

test('decode: values that are not strings or numbers fail the format', () => {
  for (const v of [true, {}, [], null, Number.NaN])
    assert.deepEqual(canonicalQuantity(v), { error: QUANTITY_FORMAT_ERROR }, String(v));
});

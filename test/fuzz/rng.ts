/**
 * A small seeded PRNG (sfc32) and the random-value helpers the fuzz generators share. Case i
 * of a run draws only from `Rng.forCase(seed, i)`, so a case is reproducible from the seed
 * and its index alone (server state it reads, e.g. a current resourceVersion, aside).
 */

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 15; i++) this.u32();
  }

  /** The generator of case `index` of the run seeded with `seed`. */
  static forCase(seed: number, index: number): Rng {
    let h = Math.imul((seed >>> 0) ^ 0x85ebca6b, 0xc2b2ae35) ^ Math.imul(index + 1, 0x27d4eb2f);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
    return new Rng((h ^ (h >>> 15)) >>> 0);
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** uniform in [0, 1) */
  float(): number {
    return this.u32() / 4294967296;
  }
  /** integer in [0, n) */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }
  /** integer in [lo, hi] */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.float() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  /** Picks by weight: entries are [weight, value]. */
  weighted<T>(entries: readonly (readonly [number, T])[]): T {
    let total = 0;
    for (const [w] of entries) total += w;
    let r = this.float() * total;
    for (const [w, v] of entries) {
      r -= w;
      if (r < 0) return v;
    }
    return entries[entries.length - 1]![1];
  }

  /** A size skewed towards small values, sometimes huge: for string and nesting lengths. */
  size(max: number): number {
    const scale = this.weighted([
      [6, 8],
      [3, 64],
      [2, 1024],
      [1, max],
    ] as const);
    return this.int(Math.min(scale, max) + 1);
  }

  /** Random text from a palette of troublesome characters. */
  text(len: number): string {
    const palette = this.pick(PALETTES);
    let s = '';
    for (let i = 0; i < len; i++) s += palette[this.int(palette.length)];
    return s;
  }

  /** A string meant to break parsers and validators. */
  nastyString(): string {
    return this.weighted<() => string>([
      [4, () => this.text(this.size(300))],
      [2, () => this.pick(NASTY)],
      [1, () => 'x'.repeat(this.pick([253, 254, 63, 64, 65, 1024, 65536, 1_100_000]))],
      [1, () => '\u0000'.repeat(this.range(1, 8)) + this.text(8)],
      [1, () => this.text(4) + '\ud800' + this.text(4)],
    ])();
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

const PALETTES: readonly string[][] = [
  [...'abcdefghijklmnopqrstuvwxyz0123456789-.'],
  [...'ABCxyz019_-./:@~%+=,!*()[]{}<>|\\"\' \t'],
  ['\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u00a0', '\u2028', '\u2029', '\ufeff', '\ufffd', '\uffff'],
  ['é', 'ß', 'Ω', 'ж', '中', '文', '😀', '🏳️‍🌈', '\u0301', '\u202e', 'İ', 'ı', 'ﬁ'],
  [...'%25%00%2F%2e'],
];

const NASTY: readonly string[] = [
  '',
  ' ',
  '.',
  '..',
  '/',
  '\\',
  '%',
  '%00',
  '%2F',
  '-',
  'a-',
  '-a',
  'A',
  'aB',
  '0',
  '00',
  '1e309',
  '-0',
  'NaN',
  'null',
  'true',
  'default',
  'kube-system',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '$patch',
  '$retainKeys',
  'a..b',
  'a/b',
  'a b',
  'a\nb',
  'a\r\nb',
  '${x}',
  '{{x}}',
  '<script>',
  "'; DROP TABLE x; --",
  '\u0000',
  'ǅ',
  'x'.repeat(254),
  'a.b.c',
  'k:{"name":"x"}',
  'f:metadata',
  'v:"x"',
  'i:0',
  '.',
  'app.kubernetes.io/name',
  'a/b/c',
  'x=y',
  'x!=y',
  'x in (a)',
];

/**
 * Request-body generators: structure-aware mutation of valid objects (fields flipped, deleted,
 * type-changed), byte-level damage of the encoded body (truncation, bit flips, NUL bytes,
 * invalid UTF-8), deep nesting, huge strings, YAML alias bombs and tags, Protobuf envelopes
 * truncated and bit-flipped, and the four patch formats.
 */
import { stringify as toYaml } from 'yaml';
import { ProtobufCodec, PROTOBUF_MEDIA_TYPE } from '../../src/codec/protobuf.js';
import type { Rng } from './rng.js';

export interface Body {
  bytes: Buffer;
  contentType: string;
  note: string;
}

let codec: ProtobufCodec | undefined;
const protobuf = () => (codec ??= new ProtobufCodec());

/** Any JSON value, nested at most `depth` levels. */
export function randomValue(rng: Rng, depth = 2): unknown {
  return rng.weighted<() => unknown>([
    [3, () => rng.nastyString()],
    [2, () => rng.pick([0, -1, 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 1, 1e308, -1e-308, 0.5, 3.14159, 1e21])],
    [1, () => rng.chance(0.5)],
    [1, () => null],
    [depth > 0 ? 2 : 0, () => Array.from({ length: rng.size(8) }, () => randomValue(rng, depth - 1))],
    [
      depth > 0 ? 2 : 0,
      () =>
        Object.fromEntries(
          Array.from({ length: rng.size(8) }, () => [rng.nastyString().slice(0, 64), randomValue(rng, depth - 1)]),
        ),
    ],
  ])();
}

/** A value nested `depth` levels deep, as text (JSON.stringify would recurse on it). */
export function nestedText(rng: Rng, depth: number): string {
  const open = rng.pick(['[', '{"a":', '{"a":[', '{"metadata":']);
  const close = open === '[' ? ']' : open === '{"a":' || open === '{"metadata":' ? '}' : ']}';
  return open.repeat(depth) + '1' + close.repeat(depth);
}

type Path = (string | number)[];

function paths(v: unknown, out: Path[] = [], at: Path = [], budget = { n: 400 }): Path[] {
  if (budget.n-- <= 0) return out;
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, out, [...at, i], budget));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, out, [...at, k], budget);
  return out;
}

function parentOf(root: any, p: Path): any {
  let cur = root;
  for (const k of p.slice(0, -1)) cur = cur?.[k];
  return cur;
}

/** Fields whose abuse exercises most server code: identity, versions, ownership, selection. */
const HOT: Path[] = [
  ['metadata', 'name'],
  ['metadata', 'namespace'],
  ['metadata', 'resourceVersion'],
  ['metadata', 'uid'],
  ['metadata', 'labels'],
  ['metadata', 'annotations'],
  ['metadata', 'finalizers'],
  ['metadata', 'generateName'],
  ['metadata', 'managedFields'],
  ['metadata', 'deletionTimestamp'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'generation'],
  ['kind'],
  ['apiVersion'],
  ['metadata'],
  ['spec'],
  ['status'],
  ['data'],
  ['spec', 'replicas'],
  ['immutable'],
];

// metadata.ownerReferences is left alone: the garbage collector would delete objects with dangling
// owners behind the half-write check's back

/** Applies 1..n random structural mutations in place; returns a short description. */
export function mutateObject(rng: Rng, obj: any, n = rng.range(1, 3)): string {
  const notes: string[] = [];
  for (let i = 0; i < n; i++) {
    const all = paths(obj).filter((p) => p.length > 0);
    const p = rng.chance(0.45) ? rng.pick(HOT) : all.length ? rng.pick(all) : rng.pick(HOT);
    const parent = p.length > 1 ? parentOf(obj, p) : obj;
    if (!parent || typeof parent !== 'object') continue;
    const key = p[p.length - 1]!;
    const op = rng.weighted([
      [3, 'set'],
      [2, 'delete'],
      [1, 'add'],
      [1, 'rename'],
      [1, 'nest'],
      [1, 'huge'],
      [2, 'element'],
    ] as const);
    notes.push(`${op} ${p.join('.')}`);
    switch (op) {
      case 'element': {
        // a list element of the wrong type: null, a number, an object where a string is due (and the reverse)
        const lists = all.filter((q) => Array.isArray(parentOf(obj, [...q, 0])));
        if (!lists.length) break;
        const list = parentOf(obj, [...rng.pick(lists), 0]) as unknown[];
        list[rng.int(list.length + 1)] = rng.pick([null, 0, -1, true, '', {}, [], { name: null }, 'x'.repeat(300)]);
        break;
      }
      case 'set':
        parent[key] = randomValue(rng);
        break;
      case 'delete':
        if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
        else delete parent[key];
        break;
      case 'add': {
        const target = parent[key] && typeof parent[key] === 'object' ? parent[key] : parent;
        if (Array.isArray(target)) target.push(randomValue(rng));
        else target[rng.nastyString().slice(0, 80)] = randomValue(rng);
        break;
      }
      case 'rename':
        if (!Array.isArray(parent)) {
          parent[rng.pick(['Kind', 'meta data', 'metadata ', key + '_', '$patch'])] = parent[key];
          delete parent[key];
        }
        break;
      case 'nest':
        parent[key] = JSON.parse(nestedText(rng, rng.range(2, 60)));
        break;
      case 'huge':
        parent[key] = 'h'.repeat(rng.pick([1024, 262_144, 1_100_000, 1_600_000]));
        break;
    }
  }
  return notes.join(', ');
}

/** Damages encoded bytes; returns the damaged copy and what was done. */
export function damageBytes(rng: Rng, src: Buffer): [Buffer, string] {
  const b = Buffer.from(src);
  const at = () => rng.int(Math.max(1, b.length));
  return rng.weighted<() => [Buffer, string]>([
    [
      3,
      () => {
        const n = at();
        return [b.subarray(0, n), `truncated@${n}`];
      },
    ],
    [
      3,
      () => {
        const n = rng.range(1, 8);
        for (let i = 0; i < n && b.length; i++) b[at()]! ^= 1 << rng.int(8);
        return [b, `bitflip x${n}`];
      },
    ],
    [
      1,
      () => {
        if (b.length) b[at()] = 0;
        return [b, 'nul byte'];
      },
    ],
    [
      1,
      () => {
        const i = at();
        return [
          Buffer.concat([b.subarray(0, i), Buffer.from(rng.bytes(rng.range(1, 16))), b.subarray(i)]),
          'inserted bytes',
        ];
      },
    ],
    [
      1,
      () => {
        const i = at();
        return [Buffer.concat([b.subarray(0, i), b.subarray(i + rng.range(1, 32))]), 'deleted span'];
      },
    ],
    [
      1,
      () => {
        const i = at();
        return [Buffer.concat([b.subarray(0, i), b.subarray(i), b.subarray(i)]), 'duplicated tail'];
      },
    ],
    [
      1,
      () => {
        const i = at();
        return [
          Buffer.concat([b.subarray(0, i), Buffer.from([0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xff]), b.subarray(i)]),
          'invalid utf-8',
        ];
      },
    ],
    [1, () => [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]), 'bom']],
    [
      1,
      () => [
        Buffer.concat([b, Buffer.from(rng.pick(['}', ']', ',', ' garbage', '\u0000', '{}', '\n---\nkind: x']))]),
        'trailing garbage',
      ],
    ],
  ])();
}

/** JSON text with a duplicated key (JSON.parse keeps the last one; upstream's strict decoding warns). */
function duplicateKey(text: string, rng: Rng): string {
  const keys = [...text.matchAll(/"(name|kind|apiVersion|namespace|resourceVersion|data|spec)":/g)];
  if (!keys.length) return text;
  const m = rng.pick(keys);
  return text.slice(0, m.index!) + `"${m[1]}":${JSON.stringify(randomValue(rng, 0))},` + text.slice(m.index!);
}

export function jsonBody(rng: Rng, obj: unknown): Body {
  let text = rng.chance(0.1) ? JSON.stringify(obj, null, rng.pick([1, 2, '\t'])) : JSON.stringify(obj);
  let note = 'json';
  if (rng.chance(0.08)) {
    text = duplicateKey(text, rng);
    note += ' dup-key';
  }
  if (rng.chance(0.05)) {
    const depth = rng.pick([100, 1000, 10_000, 100_000, 400_000]);
    text = text.replace(/}$/, `,"nested":${nestedText(rng, depth)}}`);
    note += ` nested${depth}`;
  }
  const bytes = Buffer.from(text);
  if (rng.chance(0.2)) {
    const [d, how] = damageBytes(rng, bytes);
    return { bytes: d, contentType: 'application/json', note: `${note} ${how}` };
  }
  return { bytes, contentType: 'application/json', note };
}

/** YAML that attacks the parser: alias bombs, recursive aliases, tags, merge keys, documents. */
function hostileYaml(rng: Rng, obj: any): [string, string] {
  const head = `apiVersion: ${JSON.stringify(obj.apiVersion ?? 'v1')}\nkind: ${JSON.stringify(obj.kind ?? 'x')}\nmetadata:\n  name: ${JSON.stringify(obj.metadata?.name ?? 'x')}\n`;
  return rng.weighted<() => [string, string]>([
    [
      2,
      () => {
        const levels = rng.range(3, 10);
        let y = 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
        for (let i = 1; i < levels; i++)
          y += `a${i}: &a${i} [${Array(9)
            .fill(`*a${i - 1}`)
            .join(',')}]\n`;
        return [`${head}data:\n${y.replace(/^/gm, '  ')}`, `alias bomb ${levels}`];
      },
    ],
    [1, () => [`${head}data: &x\n  self: *x\n`, 'recursive alias']],
    [1, () => [`${head}spec: &s [*s]\n`, 'recursive alias in sequence']],
    [1, () => [`${head}data: *undefined\n`, 'undefined alias']],
    [1, () => [`${head}base: &b {k: v}\ndata:\n  <<: *b\n  <<: [*b, *b]\n`, 'merge keys']],
    [1, () => [`${head}data: !!binary aGVsbG8=\nspec: !!js/function "function(){}"\nx: !custom {a: 1}\n`, 'tags']],
    [1, () => [`${head}data:\n  ? [a, b]\n  : complex-key\n  1: int-key\n  null: null-key\n`, 'non-string keys']],
    [1, () => [`${head}---\n${head}---\n`, 'multi-document']],
    [1, () => [`${head}data:\n\tk: tab-indented\n`, 'tab indentation']],
    [
      1,
      () => [
        `${head}data: {k: yes, n: no, o: on, t: 0x1F, e: 1e3, d: 2024-01-01, nan: .nan, inf: -.inf}\n`,
        'yaml 1.1 scalars',
      ],
    ],
    [
      1,
      () => [`${head}data:\n${'  '.repeat(1)}${'- '.repeat(rng.pick([100, 5000, 50_000]))}x\n`, 'deep block sequence'],
    ],
    [1, () => [`${head}data: ${'['.repeat(rng.pick([100, 10_000, 100_000]))}`, 'unterminated flow nesting']],
    [1, () => [`%YAML 9.9\n%TAG ! tag:x,2000:\n---\n${head}`, 'directives']],
    [1, () => ['', 'empty']],
    [1, () => ['[1, 2, 3]\n', 'top-level sequence']],
    [1, () => ['"just a string"\n', 'top-level scalar']],
  ])();
}

export function yamlBody(rng: Rng, obj: any): Body {
  const contentType = rng.pick(['application/yaml', 'application/yaml', 'text/yaml', 'application/x-yaml']);
  if (rng.chance(0.3)) {
    const [text, note] = hostileYaml(rng, obj);
    return { bytes: Buffer.from(text), contentType, note: `yaml ${note}` };
  }
  let text: string;
  try {
    text = toYaml(obj, { aliasDuplicateObjects: false });
  } catch {
    text = JSON.stringify(obj);
  }
  const bytes = Buffer.from(text);
  if (rng.chance(0.2)) {
    const [d, how] = damageBytes(rng, bytes);
    return { bytes: d, contentType, note: `yaml ${how}` };
  }
  return { bytes, contentType, note: 'yaml' };
}

/** An envelope built by the project codec, then damaged; unencodable objects fall back to junk. */
export function protobufBody(rng: Rng, obj: any): Body {
  const contentType = rng.chance(0.85) ? PROTOBUF_MEDIA_TYPE : 'application/vnd.kubernetes.protobuf';
  let bytes: Buffer;
  let note = 'protobuf';
  try {
    bytes = Buffer.from(protobuf().encodeObject(obj));
  } catch (e) {
    bytes = Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), Buffer.from(rng.bytes(rng.size(512)))]);
    note += ` unencodable(${(e as Error).constructor.name}) random`;
  }
  if (rng.chance(0.6)) {
    const how = rng.weighted<() => [Buffer, string]>([
      [5, () => damageBytes(rng, bytes)],
      [
        1,
        () => [
          Buffer.concat([bytes.subarray(0, 4), Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])]),
          'huge length prefix',
        ],
      ],
      [
        1,
        () => [Buffer.concat([bytes.subarray(0, 4), Buffer.from([0x0a, ...Array(11).fill(0xff)])]), 'overlong varint'],
      ],
      [1, () => [Buffer.from([0x6b, 0x38, 0x73]), 'short magic']],
      [1, () => [bytes.subarray(4), 'missing magic']],
      [1, () => [Buffer.concat([bytes.subarray(0, 4), Buffer.from([0x0f, 0x0f, 0x0f])]), 'invalid wire type']],
      [
        1,
        () => [
          Buffer.concat([bytes.subarray(0, 4), Buffer.from([0x12, 0x80, 0x80, 0x80, 0x80, 0x08])]),
          'negative length',
        ],
      ],
    ])();
    bytes = how[0];
    note += ` ${how[1]}`;
  }
  return { bytes, contentType, note };
}

/** A create/update body in a random encoding, mutated with probability `mutate`. */
export function objectBody(rng: Rng, obj: any, mutate: number): Body {
  const o = structuredClone(obj);
  const how = rng.chance(mutate) ? mutateObject(rng, o) : 'valid';
  const b = rng.weighted<() => Body>([
    [6, () => jsonBody(rng, o)],
    [2, () => yamlBody(rng, o)],
    [2, () => protobufBody(rng, o)],
  ])();
  return { ...b, note: `${b.note} [${how}]` };
}

const JSON_POINTERS = [
  '',
  '/',
  '/metadata',
  '/metadata/name',
  '/metadata/labels/app',
  '/metadata/labels/a~1b',
  '/metadata/annotations',
  '/metadata/resourceVersion',
  '/metadata/uid',
  '/data/k',
  '/data/-',
  '/spec/containers/0/image',
  '/spec/containers/-',
  '/spec/replicas',
  '/metadata/finalizers/0',
  '/metadata/finalizers/-',
  '/spec/containers/99999999999',
  '/kind',
  '/apiVersion',
  '/a/b/c',
  '~2',
  '/~',
  '/status',
  '/metadata/managedFields/0/fieldsV1',
  '/metadata/labels/-',
  '/data/01',
  '/spec/ports/0/port',
];

function jsonPatch(rng: Rng): unknown {
  return Array.from({ length: rng.size(6) + (rng.chance(0.8) ? 1 : 0) }, () => {
    const op: Record<string, unknown> = {
      op: rng.pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'ADD', 'nope', '']),
      path: rng.pick(JSON_POINTERS),
    };
    if (rng.chance(0.8))
      op.value = rng.chance(0.5) ? rng.pick(['v', 'fz', 'Running', 3, { k: 'v' }, ['x'], null]) : randomValue(rng);
    if (rng.chance(0.4)) op.from = rng.pick(JSON_POINTERS);
    if (rng.chance(0.1)) delete op.op;
    if (rng.chance(0.05)) op.path = randomValue(rng, 0);
    return op;
  });
}

/** A patch body and its content type. `current` is the object as stored (if any). */
export function patchBody(rng: Rng, current: any, seed: any): Body {
  const kind = rng.weighted([
    [3, 'json'],
    [3, 'merge'],
    [3, 'strategic'],
    [3, 'apply'],
    [1, 'other'],
  ] as const);
  let value: unknown;
  let contentType: string;
  switch (kind) {
    case 'json':
      contentType = 'application/json-patch+json';
      value = rng.chance(0.9) ? jsonPatch(rng) : randomValue(rng);
      break;
    case 'merge':
    case 'strategic': {
      contentType = kind === 'merge' ? 'application/merge-patch+json' : 'application/strategic-merge-patch+json';
      const p: any = rng.chance(0.5)
        ? { metadata: { labels: { patched: 'yes', gone: null } }, data: { k: 'p' } }
        : structuredClone(current ?? seed);
      if (kind === 'strategic' && rng.chance(0.5)) {
        const directive = rng.pick([
          { $patch: rng.pick(['delete', 'replace', 'merge', 'bogus', 5]) },
          { $retainKeys: rng.pick([['a'], 'x', null]) },
          { '$setElementOrder/containers': rng.pick([[{ name: 'c' }], [1], 'x']) },
          { '$deleteFromPrimitiveList/finalizers': rng.pick([['x'], 7]) },
        ]);
        Object.assign(rng.chance(0.5) ? p : (p.spec ??= {}), directive);
        if (rng.chance(0.3))
          p.spec = { ...(p.spec ?? {}), containers: [{ name: 'c', $patch: 'delete' }, { $patch: 'replace' }] };
      }
      if (rng.chance(0.5)) mutateObject(rng, p);
      value = rng.chance(0.05) ? randomValue(rng) : p;
      break;
    }
    case 'apply': {
      const yaml = rng.chance(0.6);
      contentType = yaml ? 'application/apply-patch+yaml' : 'application/apply-patch+json';
      const obj = structuredClone(seed);
      if (rng.chance(0.4)) mutateObject(rng, obj);
      if (yaml && rng.chance(0.2)) {
        const [text, note] = hostileYaml(rng, obj);
        return { bytes: Buffer.from(text), contentType, note: `apply ${note}` };
      }
      const text = yaml ? safeYaml(obj) : JSON.stringify(obj);
      const b = rng.chance(0.15) ? damageBytes(rng, Buffer.from(text)) : ([Buffer.from(text), 'valid'] as const);
      return { bytes: b[0], contentType, note: `apply ${b[1]}` };
    }
    default:
      contentType = rng.pick([
        'application/json',
        'application/yaml',
        'text/plain',
        'application/json-patch+json; charset=utf-8',
        '',
        'application/merge-patch+json;x=y',
        PROTOBUF_MEDIA_TYPE,
      ]);
      value = current ?? seed;
  }
  const text = JSON.stringify(value);
  if (rng.chance(0.12)) {
    const [d, how] = damageBytes(rng, Buffer.from(text));
    return { bytes: d, contentType, note: `${kind} ${how}` };
  }
  return { bytes: Buffer.from(text), contentType, note: kind };
}

function safeYaml(obj: unknown): string {
  try {
    return toYaml(obj, { aliasDuplicateObjects: false });
  } catch {
    return JSON.stringify(obj);
  }
}

/** A DeleteOptions body (often absent), sometimes broken. */
export function deleteBody(rng: Rng, current: any): Body | undefined {
  if (rng.chance(0.6)) return undefined;
  const o: any = { kind: 'DeleteOptions', apiVersion: 'v1' };
  if (rng.chance(0.5))
    o.preconditions = {
      resourceVersion: rng.chance(0.5) ? current?.metadata?.resourceVersion : '1',
      uid: rng.chance(0.5) ? current?.metadata?.uid : undefined,
    };
  if (rng.chance(0.3)) o.gracePeriodSeconds = rng.pick([0, 30, -1, 'x', null]);
  if (rng.chance(0.3)) o.propagationPolicy = rng.pick(['Foreground', 'Background', 'Orphan', 'Nope']);
  if (rng.chance(0.2)) o.dryRun = rng.pick([['All'], ['Nope'], 'All']);
  if (rng.chance(0.3)) mutateObject(rng, o, 1);
  return jsonBody(rng, rng.chance(0.05) ? randomValue(rng) : o);
}

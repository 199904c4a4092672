/**
 * Plans one fuzz request: target (endpoint family, type, scope, name, subresource), method,
 * path (sometimes mangled), query string and headers. The body is built later by `makeBody`
 * from the object as stored, so writes to existing objects are realistic before mutation.
 */
import { PROTOBUF_MEDIA_TYPE } from '../../src/codec/protobuf.js';
import type { Rng } from './rng.js';
import {
  CHECKED_NAMES,
  LOOSE_NAMES,
  NON_RESOURCE_PATHS,
  SCRATCH_NAMESPACES,
  STABLE_NAMESPACES,
  collectionPath,
  objectPath,
  seedBody,
  subresourceBody,
  type ResourceType,
} from './catalog.js';
import { deleteBody, objectBody, patchBody, type Body } from './bodies.js';

export interface Plan {
  method: string;
  /** path and query string, exactly as sent */
  target: string;
  headers: Record<string, string>;
  /** the main object whose state must not change if the request fails (one request per key) */
  check?: { key: string; path: string; dryRun: boolean };
  /** may delete objects it does not name (delete-collection, mangled DELETE): runs alone */
  exclusive: boolean;
  watch: boolean;
  makeBody?: (current: any) => Body | undefined;
  note: string;
}

/** Values observed from the server (versions, continue tokens) that make queries realistic. */
export interface Observed {
  rv: string;
  continues: string[];
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export function planRequest(rng: Rng, types: ResourceType[], seen: Observed): Plan {
  return rng.weighted<() => Plan>([
    [8, () => nonResource(rng)],
    [4, () => discovery(rng, types)],
    [88, () => resource(rng, rng.chance(0.5) ? rng.pick(hot(types)) : rng.pick(types), seen)],
  ])();
}

/** The kinds users write most (and the server has strategies for) get half of the traffic. */
const HOT = new Set([
  '/configmaps',
  '/secrets',
  '/pods',
  '/services',
  '/namespaces',
  '/nodes',
  '/events',
  '/endpoints',
  'apps/deployments',
  'apps/statefulsets',
  'coordination.plat.io/leases',
  'rbac.authorization.plat.io/roles',
  'batch/jobs',
  'apps/replicasets',
]);
let hotCache: { from: ResourceType[]; hot: ResourceType[] } | undefined;
function hot(types: ResourceType[]): ResourceType[] {
  if (hotCache?.from !== types)
    hotCache = { from: types, hot: types.filter((t) => HOT.has(`${t.group}/${t.resource}`)) };
  return hotCache.hot.length ? hotCache.hot : types;
}

function nonResource(rng: Rng): Plan {
  const method = rng.weighted([
    [8, 'GET'],
    [1, 'HEAD'],
    [1, 'POST'],
    [1, 'OPTIONS'],
    [1, 'DELETE'],
  ] as const);
  let target: string = rng.pick(NON_RESOURCE_PATHS);
  if (rng.chance(0.3)) target = manglePath(rng, target);
  return {
    method,
    target: withQuery(target, rng.chance(0.3) ? garbageQuery(rng) : []),
    headers: headers(rng, method),
    exclusive: false,
    watch: false,
    note: 'non-resource',
  };
}

function discovery(rng: Rng, types: ResourceType[]): Plan {
  const t = rng.pick(types);
  let target = rng.pick([
    t.group ? `/apis/${t.group}` : '/api',
    t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`,
    '/api/v2',
    '/apis/nope.plat.io',
    '/apis/nope.plat.io/v1',
    `/apis/${t.group || 'apps'}/v0`,
    '/apis/apps/v1/',
    '/api/v1/',
  ]);
  if (rng.chance(0.3)) target = manglePath(rng, target);
  const method = rng.weighted([
    [9, 'GET'],
    [1, 'HEAD'],
    [1, 'PUT'],
  ] as const);
  return {
    method,
    target: withQuery(target, rng.chance(0.2) ? garbageQuery(rng) : []),
    headers: headers(rng, method),
    exclusive: false,
    watch: false,
    note: 'discovery',
  };
}

function resource(rng: Rng, t: ResourceType, seen: Observed): Plan {
  const checked = rng.chance(0.6);
  const subs = [...t.subresources.keys()];
  const sub = subs.length && rng.chance(0.25) ? rng.pick(subs) : undefined;
  const allowed = [...(sub ? t.subresources.get(sub)! : t.verbs)];
  let verb =
    rng.chance(0.1) || allowed.length === 0
      ? rng.pick(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', 'options'])
      : rng.pick(allowed);
  // objects must exist for updates, patches and deletes to get past 404
  if (!sub && allowed.includes('create') && rng.chance(0.15)) verb = 'create';
  // a watch holds a worker for its whole second: keep them to a few percent of the traffic
  if (verb === 'watch' && rng.chance(0.6)) verb = 'list';
  const ns = t.namespaced
    ? checked
      ? rng.pick(STABLE_NAMESPACES)
      : rng.chance(0.85)
        ? rng.pick(SCRATCH_NAMESPACES)
        : enc(rng.nastyString().slice(0, 80))
    : undefined;
  let name: string = checked
    ? rng.pick(CHECKED_NAMES)
    : rng.chance(0.8)
      ? rng.pick(LOOSE_NAMES)
      : rng.nastyString().slice(0, 300);
  // the stable namespaces are never targets of namespace writes; scratch ones are created and deleted freely
  if (t.resource === 'namespaces' && !t.group && !checked) name = rng.pick(SCRATCH_NAMESPACES);
  const single = !['list', 'watch', 'deletecollection'].includes(verb) && !(verb === 'create' && !sub);
  let path =
    single || sub
      ? objectPath(t, ns, enc(name), sub)
      : collectionPath(t, rng.chance(0.15) && t.namespaced && verb !== 'create' ? undefined : ns);
  if (verb === 'watch' && rng.chance(0.4) && !sub) path = path.replace(/^(\/apis?\/(?:[^/]+\/)?v[^/]+)\//, '$1/watch/');
  const mangled = !checked && rng.chance(0.3);
  if (mangled) path = manglePath(rng, path);
  const method = methodFor(rng, verb);
  const watch = verb === 'watch';
  const query = queryFor(rng, verb, seen, checked);
  if (
    watch ||
    ((method === 'GET' || method === 'HEAD') &&
      query.some(([k, v]) => k === 'watch' && v !== '0' && v.toLowerCase() !== 'false'))
  ) {
    forceWatchTimeout(query);
  }
  const target = withQuery(path, query);
  const dryRun = query.some(([k, v]) => k === 'dryRun' && v === 'All');
  const isWrite =
    WRITE_VERBS.has(verb) || method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
  const h = headers(rng, method);
  // writes answered in Protobuf encode what was just stored: a second chance for an encoder failure after commit
  if (isWrite && rng.chance(0.15)) h.accept = PROTOBUF_MEDIA_TYPE;
  const plan: Plan = {
    method,
    target,
    headers: h,
    watch: watch || query.some(([k]) => k === 'watch'),
    exclusive: method === 'DELETE' && (mangled || verb === 'deletecollection'),
    note: `${t.group || 'core'}/${t.version}/${t.resource}${sub ? '/' + sub : ''} ${verb}${checked ? ' checked' : ''}${mangled ? ' mangled' : ''}`,
  };
  if (checked && isWrite && !mangled && verb !== 'deletecollection') {
    // events.<domain>/v1 Events are the core Events stored once: one lock for both; a legacy
    // Binding (core `bindings`) writes the pod it names, so it takes that pod's lock
    const group = t.resource === 'events' && t.group.startsWith('events.') ? '' : t.group;
    const resource = t.resource === 'bindings' && !t.group ? 'pods' : t.resource;
    plan.check = { key: `${group}/${resource}/${ns ?? ''}/${name}`, path: objectPath(t, ns, enc(name)), dryRun };
  }
  if (method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE' || rng.chance(0.03)) {
    plan.makeBody = (current) => {
      const seed = seedBody(t, name, ns, rng.chance(0.1));
      if (method === 'DELETE') return deleteBody(rng, current);
      if (method === 'PATCH') return patchBody(rng, current, sub ? subresourceBody(t, sub, name, ns, current) : seed);
      let obj = sub
        ? subresourceBody(t, sub, name, ns, current)
        : method === 'PUT' && current && rng.chance(0.8)
          ? current
          : seed;
      if (method === 'PUT' && current && rng.chance(0.2))
        obj = { ...obj, metadata: { ...obj.metadata, resourceVersion: rng.pick(['1', '0', '', seen.rv]) } };
      if (method === 'PUT' && obj === current)
        obj = {
          ...current,
          metadata: {
            ...current.metadata,
            labels: { ...(current.metadata?.labels ?? {}), touched: String(rng.int(1000)) },
          },
        };
      try {
        return objectBody(rng, obj, rng.chance(0.3) ? 0 : 0.6);
      } catch {
        // a stored object too deep to clone (the server accepted it): mutate the seed instead
        return objectBody(rng, seed, 0.6);
      }
    };
  }
  return plan;
}

function methodFor(rng: Rng, verb: string): string {
  if (rng.chance(0.03)) return rng.pick(['OPTIONS', 'HEAD', 'TRACE', 'BREW', 'CONNECT_ME', 'PROPFIND']);
  switch (verb) {
    case 'get':
      return rng.chance(0.1) ? 'HEAD' : 'GET';
    case 'list':
    case 'watch':
      return 'GET';
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'patch':
      return 'PATCH';
    case 'delete':
    case 'deletecollection':
      return 'DELETE';
    default:
      return 'OPTIONS';
  }
}

type Query = [string, string][];

/** encodeURIComponent that survives lone surrogates */
export function enc(s: string): string {
  return encodeURIComponent(
    s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
  );
}

function withQuery(path: string, q: Query): string {
  if (!q.length) return path;
  const encq = (s: string) => enc(s).replace(/%25([0-9A-Fa-f]{2})/g, (m, h) => (h === '00' ? '%00' : m));
  return `${path}?${q.map(([k, v]) => (v === '\u0001' ? encq(k) : `${encq(k)}=${encq(v)}`)).join('&')}`;
}

function forceWatchTimeout(q: Query): void {
  for (let i = q.length - 1; i >= 0; i--) if (q[i]![0] === 'timeoutSeconds' || q[i]![0] === 'timeout') q.splice(i, 1);
  q.push(['timeoutSeconds', '1']);
}

const LABEL_SELECTORS = [
  'app=fz',
  'app in (fz,x)',
  '!app',
  'app,touched!=1',
  'fuzz.plat.io/seed=yes',
  'a.b/c=d',
  '',
  '=',
  'app in (',
  'app=(',
  '!!',
  'in in in',
  ',,',
  'app notin ()',
  'app>1',
  'app==fz',
  'app!=',
  'x'.repeat(400),
  'app in (a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p)',
  '%',
  'ǅ=1',
];
const FIELD_SELECTORS = [
  'metadata.name=fz-0',
  'metadata.namespace!=default',
  'status.phase=Running',
  'spec.nodeName=',
  'nope=1',
  '=',
  'metadata.name',
  'metadata.name==fz-1,,',
  'metadata.name!=a,metadata.namespace=fuzz-a',
  'type=Opaque',
  'metadata.name in (a)',
  '\\=,\\,',
  '',
];
const POOLS: Record<string, (rng: Rng, seen: Observed) => string> = {
  labelSelector: (rng) => (rng.chance(0.85) ? rng.pick(LABEL_SELECTORS) : rng.nastyString()),
  fieldSelector: (rng) => (rng.chance(0.85) ? rng.pick(FIELD_SELECTORS) : rng.nastyString()),
  limit: (rng) =>
    rng.pick(['1', '2', '3', '500', '0', '-1', 'abc', '1e3', '99999999999999999999', '', ' 1', '1.5', '0x10']),
  continue: (rng, seen) =>
    rng.chance(0.4) && seen.continues.length
      ? rng.pick(seen.continues)
      : rng.pick([
          '!!!',
          'e30',
          Buffer.from('{"rv":1,"start":"x"}').toString('base64url'),
          Buffer.from('{"rv":"x","start":5,"issued":-1}').toString('base64url'),
          Buffer.from('[]').toString('base64url'),
          Buffer.from('null').toString('base64url'),
          'a'.repeat(5000),
          '',
          '%00',
        ]),
  resourceVersion: (rng, seen) =>
    rng.pick([
      '0',
      '1',
      '',
      'abc',
      '-1',
      '1.5',
      seen.rv,
      String(Number(seen.rv) + 1),
      '99999999999999999999',
      '00',
      ' 5',
    ]),
  resourceVersionMatch: (rng) => rng.pick(['NotOlderThan', 'Exact', '', 'bogus', 'exact']),
  allowWatchBookmarks: (rng) => rng.pick(['true', 'false', 'x']),
  sendInitialEvents: (rng) => rng.pick(['true', 'false', '1', 'x']),
  dryRun: (rng) => rng.pick(['All', 'All', 'all', 'None', '', 'x']),
  fieldValidation: (rng) => rng.pick(['Strict', 'Warn', 'Ignore', 'strict', 'nope', '']),
  fieldManager: (rng) => rng.pick(['fz', 'fz-2', '', 'x'.repeat(200), 'mgr/ü', 'kubectl', 'a\u0000b']),
  force: (rng) => rng.pick(['true', 'false', '1', 'maybe']),
  pretty: (rng) => rng.pick(['true', '1', '0', 'false', 'x']),
  propagationPolicy: (rng) => rng.pick(['Foreground', 'Background', 'Orphan', 'nope', '']),
  gracePeriodSeconds: (rng) => rng.pick(['0', '30', '-1', 'x', '1e9']),
  orphanDependents: (rng) => rng.pick(['true', 'false']),
  timeout: (rng) => rng.pick(['1ms', '0', '-1s', 'abc', '1h', '10s', '5', '1.5s', '100000000h', '1ns']),
  timeoutSeconds: () => '1',
  watch: (rng) => rng.pick(['1', 'true', 'false', '0', 'x']),
};
const BY_VERB: Record<string, string[]> = {
  get: ['resourceVersion', 'pretty'],
  list: [
    'labelSelector',
    'fieldSelector',
    'limit',
    'continue',
    'resourceVersion',
    'resourceVersionMatch',
    'pretty',
    'watch',
  ],
  watch: [
    'labelSelector',
    'fieldSelector',
    'resourceVersion',
    'resourceVersionMatch',
    'allowWatchBookmarks',
    'sendInitialEvents',
  ],
  create: ['dryRun', 'fieldValidation', 'fieldManager', 'pretty'],
  update: ['dryRun', 'fieldValidation', 'fieldManager', 'pretty'],
  patch: ['dryRun', 'fieldValidation', 'fieldManager', 'force', 'pretty'],
  delete: ['dryRun', 'propagationPolicy', 'gracePeriodSeconds', 'orphanDependents', 'pretty'],
  deletecollection: ['dryRun', 'labelSelector', 'fieldSelector', 'propagationPolicy', 'gracePeriodSeconds'],
};

function queryFor(rng: Rng, verb: string, seen: Observed, checked: boolean): Query {
  const q: Query = [];
  for (const k of BY_VERB[verb] ?? []) if (rng.chance(0.3)) q.push([k, POOLS[k]!(rng, seen)]);
  if (verb === 'patch' && rng.chance(0.6)) q.push(['fieldManager', 'fz']);
  if (!checked && rng.chance(0.1)) q.push(['timeout', POOLS.timeout!(rng, seen)]);
  if (checked && rng.chance(0.05)) q.push(['timeout', '60s']);
  if (rng.chance(0.1)) q.push(...garbageQuery(rng));
  return q;
}

function garbageQuery(rng: Rng): Query {
  return Array.from({ length: rng.range(1, 4) }, (): [string, string] => {
    const key = rng.chance(0.7) ? rng.pick(Object.keys(POOLS)) : rng.nastyString().slice(0, 100);
    return [
      key === 'timeoutSeconds' || key === 'watch' ? 'x-' + key : key,
      rng.chance(0.1) ? '\u0001' : rng.nastyString().slice(0, 2000),
    ];
  });
}

/** Mangles a path: dot segments, NUL, double slashes, bad escapes, long or extra segments. */
export function manglePath(rng: Rng, path: string): string {
  const segs = path.split('/');
  const n = rng.range(1, 3);
  for (let i = 0; i < n; i++) {
    const at = rng.range(1, Math.max(1, segs.length - 1));
    const what = rng.pick([
      '..',
      '.',
      '%2e%2e',
      '%00',
      'x%00y',
      '%zz',
      '%',
      '%2F',
      '',
      'WATCH',
      '%E2%82%AC',
      '%C0%AF',
      '%ff%fe',
      'y'.repeat(rng.pick([300, 5000, 70_000])),
      'api',
      'namespaces',
      'status',
      'scale',
      'finalize',
      'log',
      'binding',
      '*',
      '~',
      ';x=1',
      '%20',
    ]);
    const mode = rng.pick(['replace', 'insert', 'append', 'double', 'trailing']);
    if (mode === 'replace') segs[at] = what;
    else if (mode === 'insert') segs.splice(at, 0, what);
    else if (mode === 'append') segs.push(what);
    else if (mode === 'double') segs.splice(at, 0, '');
    else segs.push('');
  }
  return segs.join('/').replace(/^\/*/, rng.chance(0.1) ? '//' : '/');
}

const ACCEPTS = [
  'application/json',
  'application/yaml',
  PROTOBUF_MEDIA_TYPE,
  `${PROTOBUF_MEDIA_TYPE}, application/json`,
  '*/*',
  'application/json;q=0.5, application/yaml;q=0.9',
  `${PROTOBUF_MEDIA_TYPE};q=0.1, application/json;q=0`,
  'application/json;as=Table;v=v1;g=meta.plat.io',
  'application/json;as=Table;v=v1;g=meta.plat.io, application/json',
  'application/json;g=apidiscovery.plat.io;v=v2;as=APIGroupDiscoveryList',
  'text/html',
  'text/plain',
  'application/xml',
  'image/png;q=1',
  'application/*',
  '*/*;q=0',
  'application/json;q=abc',
  ';;;',
  ',,',
  'q=1',
  'application/json;stream=watch',
  `${PROTOBUF_MEDIA_TYPE};stream=watch`,
  'application/cbor',
  'application/json-seq',
  'APPLICATION/JSON',
  'application/yaml;q=0.9;q=0.1',
  `application/json;q=0.${'9'.repeat(400)}`,
  'a/b, c/d, e/f, '.repeat(200) + 'application/json',
];
const CONTENT_TYPES = [
  'application/json',
  'application/yaml',
  PROTOBUF_MEDIA_TYPE,
  'application/vnd.kubernetes.protobuf',
  'text/plain',
  'application/json; charset=utf-16',
  'application/json;;;',
  '',
  '*/*',
  `${PROTOBUF_MEDIA_TYPE};stream=watch`,
  'application/cbor',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'APPLICATION/JSON',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'x'.repeat(3000),
  'application/json; charset=ütf',
];

function latin1(s: string): string {
  return s.replace(/[^\u0020-\u007e\u00a0-\u00ff]/g, '?');
}

function headers(rng: Rng, method: string): Record<string, string> {
  const h: Record<string, string> = {};
  if (rng.chance(0.45)) h.accept = rng.chance(0.5) ? rng.pick(ACCEPTS.slice(0, 5)) : rng.pick(ACCEPTS);
  if (rng.chance(0.08)) h['content-type'] = rng.pick(CONTENT_TYPES);
  if (rng.chance(0.15))
    h['accept-encoding'] = rng.pick(['gzip', 'gzip, deflate, br', 'identity', '*', 'gzip;q=0', 'x']);
  if (rng.chance(0.1))
    h['user-agent'] = latin1(
      rng.pick(['kubectl/v1.32.0 (linux/amd64)', '', '/', 'fz/' + rng.nastyString().slice(0, 300)]),
    );
  if (rng.chance(0.03))
    h[rng.pick(['x-fz', 'impersonate-user', 'authorization', 'if-none-match', 'x-http-method-override'])] = latin1(
      rng.nastyString().slice(0, 500),
    );
  if (method === 'HEAD' || method === 'GET') delete h['content-type'];
  return h;
}

/**
 * Parses a request path and method into RequestInfo, upstream's request-info rules. A
 * RequestInfo is never modified (a GET's may be shared by every request to its path).
 */
export interface RequestInfo {
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly verb: string;
  readonly apiPrefix: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  readonly parts: readonly string[];
}

type Parsed = { -readonly [K in keyof RequestInfo]: RequestInfo[K] };

/**
 * The parsed GETs (without a watch query) by path: a repeated GET is one lookup, and its info's
 * strings are the same objects each time, so the lookups that follow (registry, read cache)
 * find their hashes computed. Cleared when full (a bound against clients walking many paths).
 */
const GETS = new Map<string, RequestInfo>();
/** how many paths GETS (and POSTS) keep */
const MAX_GETS = 4096;

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** The lower-case verbs of the usual methods, so the hot path does not lower-case a string per request. */
const METHOD_VERBS: Record<string, string> = {
  GET: 'get',
  HEAD: 'head',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'delete',
  OPTIONS: 'options',
};

/**
 * The parsed POSTs by path, as GETS: a create's info depends on its path alone (the query is read
 * for GET and HEAD only), and creates repeat their collection's path.
 */
const POSTS = new Map<string, RequestInfo>();

/** The request's RequestInfo: a GET's or a POST's from those parsed before when its path was seen. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  if (method === 'POST') return POSTS.get(path) ?? remember(POSTS, path, parse(method, path, query));
  if (method !== 'GET') return parse(method, path, query);
  const watch = isWatchQuery(query);
  const known = watch ? undefined : GETS.get(path);
  if (known) return known;
  const info = parse(method, path, query);
  if (watch) return info;
  return remember(GETS, path, info);
}

/** Keeps a parsed info for its path (frozen: it is shared from now on); the map is cleared when full. */
function remember(known: Map<string, RequestInfo>, path: string, info: RequestInfo): RequestInfo {
  if (known.size >= MAX_GETS) known.clear();
  Object.freeze(info.parts);
  known.set(path, Object.freeze(info));
  return info;
}

/**
 * Hot path (every request but repeated GETs): one pass over the path's non-empty segments, no
 * intermediate arrays, and percent-decoding only of segments that contain a `%`
 * (decodeURIComponent leaves any other string as it is).
 */
function parse(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: Parsed = {
    isResourceRequest: false,
    path,
    verb: METHOD_VERBS[method] ?? method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
  const segs = segments(path);
  const prefix = segs[0];
  if (prefix !== 'api' && prefix !== 'apis') return info;
  info.apiPrefix = prefix;
  let i = 1;
  if (prefix === 'apis') {
    if (segs.length - i < 2) return info;
    info.apiGroup = segs[i++]!;
  } else if (segs.length - i < 1) return info;
  info.apiVersion = segs[i++]!;
  if (i === segs.length) return info;
  info.isResourceRequest = true;
  let watchPath = false;
  if (segs[i] === 'watch') {
    watchPath = true;
    i++;
  }
  if (segs[i] === 'namespaces' && segs.length - i > 1) {
    info.namespace = segs[i + 1]!;
    if (segs.length - i > 2 && !NAMESPACE_SUBRESOURCES.has(segs[i + 2]!)) i += 2;
  }
  const parts: string[] = [];
  for (; i < segs.length; i++) parts.push(decodeSafe(segs[i]!));
  info.parts = parts;
  info.resource = parts[0] ?? '';
  if (parts.length >= 2) info.name = parts[1]!;
  if (parts.length >= 3) info.subresource = parts[2]!;
  if (info.resource === 'namespaces' && parts.length >= 2) info.namespace = '';
  // only GET and HEAD become watches: the query is read for them alone
  info.verb = verbFor(method, info, watchPath || ((method === 'GET' || method === 'HEAD') && isWatchQuery(query)));
  return info;
}

/** The path's non-empty `/`-separated segments (as `split('/')` without the empty ones). */
function segments(path: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', from)) {
    if (at > from) out.push(path.slice(from, at));
    from = at + 1;
  }
  if (from < path.length) out.push(path.slice(from));
  return out;
}

function decodeSafe(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function isWatchQuery(q: URLSearchParams): boolean {
  const w = q.get('watch');
  return w !== null && w !== '0' && w.toLowerCase() !== 'false';
}

function verbFor(method: string, info: RequestInfo, watch: boolean): string {
  const single = info.parts.length >= 2;
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : single ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return single ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

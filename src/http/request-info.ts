/** Parses a request path and method into RequestInfo, upstream's request-info rules. */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  parts: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
  const segs = path.split('/').filter((s) => s !== '');
  if (segs.length === 0 || (segs[0] !== 'api' && segs[0] !== 'apis')) return info;
  info.apiPrefix = segs[0]!;
  let rest = segs.slice(1);
  if (info.apiPrefix === 'apis') {
    if (rest.length < 2) return info;
    info.apiGroup = rest[0]!;
    rest = rest.slice(1);
  } else if (rest.length < 1) return info;
  info.apiVersion = rest[0]!;
  rest = rest.slice(1);
  if (rest.length === 0) return info;
  info.isResourceRequest = true;
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = rest[1]!;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  info.parts = rest.map(decodeSafe);
  info.resource = info.parts[0] ?? '';
  if (info.parts.length >= 2) info.name = info.parts[1]!;
  if (info.parts.length >= 3) info.subresource = info.parts[2]!;
  if (info.resource === 'namespaces' && info.parts.length >= 2) info.namespace = '';
  info.verb = verbFor(method, info, watchPath || isWatchQuery(query));
  return info;
}

function decodeSafe(s: string): string {
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

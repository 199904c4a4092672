/**
 * The names the served OpenAPI documents (v2 and every v3 document) use. The reference is
 * written in the spec's naming (`io.plat.*` definitions, `x-plat-*` extensions, `plat.io`
 * groups). Every domain serves the groups of its kinds' `*-group-version-kind` under their
 * served names and each `x-plat-*` extension also as `x-kubernetes-*` (upstream clients find
 * schemas by those names). Under `--api-domain k8s.io` the documents are upstream's own:
 * definitions `io.k8s.*` (and `$ref`s to them), only `x-kubernetes-*` extensions, the
 * Kubernetes title and Protobuf media type.
 */
import { groupFor, REFERENCE_DOMAIN, type Identity } from './identity.js';

interface Upstream {
  definitions: string;
  title: string;
}

/** Domains whose documents take upstream's names (the definition prefix and title of that product). */
const UPSTREAM: Readonly<Record<string, Upstream>> = { 'k8s.io': { definitions: 'io.k8s.', title: 'Kubernetes' } };

const REFERENCE_PREFIX = 'io.plat.';
const REFERENCE_PROTOBUF = 'application/vnd.platform.protobuf';
const EXTENSION = 'x-plat-';

type Json = Record<string, unknown>;

export function servedOpenAPI<T>(doc: T, identity: Identity): T {
  const upstream = identity.domain === REFERENCE_DOMAIN ? undefined : UPSTREAM[identity.domain];
  // definitions carry a list of kinds, operations one
  const served = (g: unknown) =>
    g && typeof g === 'object' && typeof (g as Json)['group'] === 'string'
      ? { ...(g as Json), group: groupFor(identity, (g as Json)['group'] as string) }
      : g;
  const media = (t: string) =>
    upstream && t.startsWith(REFERENCE_PROTOBUF) ? identity.protobufMediaType + t.slice(REFERENCE_PROTOBUF.length) : t;
  // definition names, and v3's media type keys (`content`)
  const name = (n: string) =>
    upstream && n.startsWith(REFERENCE_PREFIX) ? upstream.definitions + n.slice(REFERENCE_PREFIX.length) : media(n);
  const ref = (r: string) => {
    const at = r.lastIndexOf('/') + 1;
    return r.slice(0, at) + name(r.slice(at));
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'string') return media(v);
    if (!v || typeof v !== 'object') return v;
    const out: Json = {};
    for (const [k, val] of Object.entries(v)) {
      const w = k.endsWith('-group-version-kind')
        ? Array.isArray(val)
          ? val.map(served)
          : served(val)
        : k === '$ref' && typeof val === 'string'
          ? ref(val)
          : walk(val);
      const upstreamKey = k.startsWith(EXTENSION) ? 'x-kubernetes-' + k.slice(EXTENSION.length) : undefined;
      if (!upstream || !upstreamKey) out[name(k)] = w;
      if (upstreamKey) out[upstreamKey] = w;
    }
    return out;
  };
  const out = walk(doc) as T;
  const info = (out as Json)['info'];
  if (upstream && info && typeof info === 'object')
    (out as Json)['info'] = { ...(info as Json), title: upstream.title };
  return out;
}

/** Accept / Content-Type negotiation for JSON and YAML (other encodings come later). */
import { errors } from '../api/status.js';
import type { Encoding } from '../actors/protocol.js';

interface MediaRange { type: string; params: Record<string, string> }

/** Media ranges best first: by q (default 1) descending, then concrete before wildcards (goautoneg order). */
function parseAccept(h: string): MediaRange[] {
  const q = (m: MediaRange) => { const v = Number(m.params.q ?? '1'); return Number.isFinite(v) ? v : 0; };
  const wild = (m: MediaRange) => (m.type.startsWith('*/') ? 2 : m.type.endsWith('/*') ? 1 : 0);
  return h.split(',').map((part) => {
    const [type, ...ps] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of ps) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim()] = p.slice(eq + 1).trim();
    }
    return { type: (type ?? '').toLowerCase(), params };
  }).filter((m) => m.type !== '').sort((a, b) => q(b) - q(a) || wild(a) - wild(b));
}

/**
 * Picks the response encoding. A media range with `as=` (Table, discovery) is served only
 * when the caller says it can; otherwise it is skipped so a plain fallback can match.
 */
export function negotiate(accept: string | undefined, pretty: boolean, canServe?: (m: MediaRange) => boolean, protobufType?: string): Encoding & { as?: MediaRange } {
  if (!accept) return { format: 'json', pretty };
  for (const m of parseAccept(accept)) {
    if (m.params.as) {
      if (canServe?.(m)) return { format: 'json', pretty, as: m };
      continue;
    }
    if (m.type === 'application/json' || m.type === 'application/*' || m.type === '*/*' || m.type === 'application/json-seq') return { format: 'json', pretty };
    if (m.type === 'application/yaml' || m.type === 'text/yaml' || m.type === 'application/x-yaml') return { format: 'yaml', pretty };
    if (protobufType && m.type === protobufType) return { format: 'protobuf', pretty: false, mediaType: protobufType };
  }
  throw errors.notAcceptable('only the following media types are accepted: application/json, application/yaml');
}

/** Upstream's Protobuf media type, accepted for request bodies so unmodified clients can write. */
export const UPSTREAM_PROTOBUF = 'application/vnd.kubernetes.protobuf';

export function bodyFormat(contentType: string | undefined, protobufType?: string): 'json' | 'yaml' | 'protobuf' {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (protobufType && (t === protobufType || t === UPSTREAM_PROTOBUF)) return 'protobuf';
  if (t === '' || t === 'application/json') return 'json';
  if (t === 'application/yaml' || t === 'text/yaml' || t === 'application/x-yaml') return 'yaml';
  throw errors.unsupportedMediaType(t);
}

export function isTruthy(v: string | null): boolean {
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}

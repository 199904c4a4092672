/**
 * Accept / Content-Type negotiation: JSON, YAML, Protobuf (built-in kinds) and, behind the
 * CBORServingAndStorage gate, CBOR; server-side views (`as=`) where the caller can serve them.
 */
import { errors } from '../api/status.js';
import type { Identity } from '../api/identity.js';
import type { Body, Encoding } from '../actors/protocol.js';

export interface MediaRange {
  type: string;
  params: Record<string, string>;
}

type Format = Encoding['format'];

export interface NegotiateOptions {
  /** whether a view (`as=`) media range can be served, and in which format */
  canServe?: (m: MediaRange, format: Format) => boolean;
  /** the Protobuf media type when the resource has Protobuf messages */
  protobufType?: string;
  /** CBOR offered (feature gate CBORServingAndStorage) */
  cbor?: boolean;
  /** a watch: only formats with a stream framing (JSON, Protobuf, CBOR) */
  stream?: boolean;
}

/** Media ranges best first: by q (default 1) descending, then concrete before wildcards (goautoneg order). */
export function parseAccept(h: string): MediaRange[] {
  const q = (m: MediaRange) => {
    const v = Number(m.params.q ?? '1');
    return Number.isFinite(v) ? v : 0;
  };
  const wild = (m: MediaRange) => (m.type.startsWith('*/') ? 2 : m.type.endsWith('/*') ? 1 : 0);
  return h
    .split(',')
    .map((part) => {
      const [type, ...ps] = part.split(';').map((s) => s.trim());
      const params: Record<string, string> = {};
      for (const p of ps) {
        const eq = p.indexOf('=');
        if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim();
      }
      return { type: (type ?? '').toLowerCase(), params };
    })
    .filter((m) => m.type !== '' && (m.params.q === undefined || Number(m.params.q) > 0))
    .sort((a, b) => q(b) - q(a) || wild(a) - wild(b));
}

const YAML_TYPES = new Set(['application/yaml', 'text/yaml', 'application/x-yaml']);

/** The format a media range names, or undefined when it names none the server offers. */
function formatOf(type: string, o: NegotiateOptions): Format | undefined {
  if (type === 'application/json' || type === 'application/*' || type === '*/*' || type === 'application/json-seq')
    return 'json';
  if (YAML_TYPES.has(type)) return 'yaml';
  if (o.protobufType && type === o.protobufType) return 'protobuf';
  if (o.cbor && (type === 'application/cbor' || (o.stream && type === 'application/cbor-seq'))) return 'cbor';
  return undefined;
}

/** The media types listed in 406 and 415 answers (upstream lists every serializer's type). */
export function acceptedTypes(o: Pick<NegotiateOptions, 'protobufType' | 'cbor'>): string[] {
  return [
    'application/json',
    'application/yaml',
    ...(o.protobufType ? [o.protobufType] : []),
    ...(o.cbor ? ['application/cbor'] : []),
  ];
}

/**
 * Picks the response encoding: the first acceptable range in Accept order. A range with `as=`
 * (Table, PartialObjectMetadata, discovery) is served only when the caller says it can in that
 * format; otherwise it is skipped so a later fallback can match. For a watch, as upstream, the
 * first range naming a known type decides: one without a stream framing (YAML) is a 406.
 */
export function negotiate(
  accept: string | undefined,
  pretty: boolean,
  o: NegotiateOptions = {},
): Encoding & { as?: MediaRange } {
  if (!accept) return { format: 'json', pretty };
  for (const m of parseAccept(accept)) {
    const format = formatOf(m.type, o);
    if (!format) continue;
    if (m.params.as) {
      if (o.canServe?.(m, format)) return encodingFor(format, pretty, o, m);
      continue;
    }
    if (o.stream && format === 'yaml') break;
    return encodingFor(format, pretty, o);
  }
  throw errors.notAcceptable(`only the following media types are accepted: ${acceptedTypes(o).join(', ')}`);
}

function encodingFor(
  format: Format,
  pretty: boolean,
  o: NegotiateOptions,
  as?: MediaRange,
): Encoding & { as?: MediaRange } {
  const enc: Encoding & { as?: MediaRange } = {
    format,
    pretty: format === 'json' || format === 'yaml' ? pretty : false,
  };
  if (format === 'protobuf') enc.mediaType = o.protobufType;
  if (as) enc.as = as;
  return enc;
}

/** Upstream's Protobuf media type, accepted for request bodies so unmodified clients can write. */
export const UPSTREAM_PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** The request body format from Content-Type; an unknown type is a 415 listing what is accepted. */
export function bodyFormat(contentType: string | undefined, protobufType?: string, cbor = false): Format {
  // what almost every write sends: no split, trim or lower-casing for it
  if (contentType === undefined || contentType === 'application/json') return 'json';
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (protobufType && (t === protobufType || t === UPSTREAM_PROTOBUF)) return 'protobuf';
  if (t === '' || t === 'application/json') return 'json';
  if (YAML_TYPES.has(t)) return 'yaml';
  if (cbor && t === 'application/cbor') return 'cbor';
  throw errors.unsupportedMediaType(t, acceptedTypes({ protobufType, cbor }));
}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/**
 * Whether the response is pretty-printed, as upstream's isPrettyPrint: a non-empty `pretty`
 * parameter decides (Go strconv.ParseBool; anything unparsable is false); otherwise the
 * User-Agent of a browser or command-line HTTP tool (curl, Wget, Mozilla/5.0) asks for it.
 */
export function prettyRequested(query: URLSearchParams, userAgent: string | undefined): boolean {
  const p = query.get('pretty');
  if (p) return GO_TRUE.has(p);
  return (
    userAgent !== undefined &&
    (userAgent.startsWith('curl') || userAgent.startsWith('Wget') || userAgent.startsWith('Mozilla/5.0'))
  );
}

export function isTruthy(v: string | null): boolean {
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}

/** A request body as the actors take it: text for JSON and YAML, bytes for Protobuf and CBOR. */
export function toBody(format: Format, buf: Buffer): Body {
  return format === 'protobuf' || format === 'cbor'
    ? { text: '', bytes: new Uint8Array(buf), contentType: format }
    : { text: buf.toString('utf8'), contentType: format };
}

/** Feature gate CBORServingAndStorage (alpha, off by default). */
export function cborEnabled(o: { featureGates?: Record<string, boolean> }): boolean {
  return o.featureGates?.CBORServingAndStorage === true;
}

/** What negotiation picked for an Accept header, apart from pretty and the view's query parameters. */
interface Picked {
  format: Format;
  mediaType?: string;
  as?: MediaRange;
}

/** Bound on the distinct Accept headers remembered per identity (clients send a handful). */
const MAX_PICKS = 256;
const PICKS = new WeakMap<Identity, Map<string, Picked>>();

/**
 * Response encoding of a resource request: JSON, YAML, Protobuf, CBOR, or a server-side view
 * (`as=Table|PartialObjectMetadata|PartialObjectMetadataList` of meta.<domain>/v1|v1beta1).
 * Hot path: the choice for an Accept header is remembered per identity, verb kind and
 * resource kind, so a repeated header is one Map lookup; each request gets its own Encoding.
 */
export function negotiateResource(
  identity: Identity,
  cbor: boolean,
  accept: string | undefined,
  pretty: boolean,
  query: URLSearchParams,
  verb: string,
  custom: boolean,
): Encoding {
  if (!accept) return { format: 'json', pretty };
  const kind = verb === 'list' || verb === 'deletecollection' ? 'l' : verb === 'watch' ? 'w' : 'o';
  const key = `${kind}${custom ? 1 : 0}${cbor ? 1 : 0}${accept}`;
  let picks = PICKS.get(identity);
  if (!picks) PICKS.set(identity, (picks = new Map()));
  let picked = picks.get(key);
  if (!picked) {
    picked = pick(identity, cbor, accept, verb, custom);
    if (picks.size >= MAX_PICKS) picks.clear();
    picks.set(key, picked);
  }
  const enc: Encoding = {
    format: picked.format,
    pretty: picked.format === 'json' || picked.format === 'yaml' ? pretty : false,
  };
  if (picked.mediaType !== undefined) enc.mediaType = picked.mediaType;
  const { as } = picked;
  if (as) {
    const include = query.get('includeObject') ?? 'Metadata';
    if (!['None', 'Metadata', 'Object'].includes(include))
      throw errors.badRequest(
        `includeObject: Unsupported value: "${include}": supported values: "None", "Metadata", "Object"`,
      );
    enc.view = {
      as: as.params.as as 'Table',
      groupVersion: `meta.${identity.domain}/${as.params.v}`,
      includeObject: include as 'Metadata',
    };
  }
  return enc;
}

/** negotiate() for a resource request; throws the 406 (never remembered). */
function pick(identity: Identity, cbor: boolean, accept: string, verb: string, custom: boolean): Picked {
  const metaGroup = `meta.${identity.domain}`;
  const views =
    verb === 'list' || verb === 'deletecollection'
      ? ['Table', 'PartialObjectMetadataList']
      : ['Table', 'PartialObjectMetadata'];
  // upstream (AllowsMediaTypeTransform): Table has no Protobuf message, so JSON or YAML only
  const canServe = (m: { params: Record<string, string> }, format: Encoding['format']) =>
    views.includes(m.params.as!) &&
    m.params.g === metaGroup &&
    (m.params.v === 'v1' || m.params.v === 'v1beta1') &&
    (m.params.as !== 'Table' || format === 'json' || format === 'yaml');
  const { as, format, mediaType } = negotiate(accept, false, {
    // custom resources have no Protobuf form (406; `protobuf, json` falls back to JSON)
    canServe,
    protobufType: custom ? undefined : identity.protobufMediaType,
    cbor,
    stream: verb === 'watch',
  });
  return { format, mediaType, as };
}

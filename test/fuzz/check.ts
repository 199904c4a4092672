/**
 * The response oracle: what every answer of the server must look like, whatever was sent.
 * - no 5xx, except 504 Timeout Status (too-large resourceVersion, request `timeout` elapsed);
 * - every non-2xx answer is a Status (kind Status, apiVersion v1, status Failure, message,
 *   reason, code equal to the HTTP status) in the encoding it declares; health checks,
 *   /metrics (Prometheus text) and pod logs may answer text/plain (a log path with empty
 *   segments too: the server, like upstream's router, skips them);
 * - every 2xx body decodes in the encoding it declares (JSON, YAML, Protobuf, watch lines).
 */
import { gunzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { ProtobufCodec, PROTOBUF_MEDIA_TYPE } from '../../src/codec/protobuf.js';

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** the client ended a (watch) stream that was still open */
  abortedByClient?: boolean;
  /** bytes that followed the header block of a HEAD response (must be none) */
  headBodyBytes?: number;
}

let codec: ProtobufCodec | undefined;
const protobuf = () => (codec ??= new ProtobufCodec());

export function statusProblems(s: any, code: number): string[] {
  const p: string[] = [];
  if (!s || typeof s !== 'object') return ['error body is not an object'];
  if (s.kind !== 'Status') p.push(`kind ${JSON.stringify(s.kind)}`);
  if (s.apiVersion !== 'v1') p.push(`apiVersion ${JSON.stringify(s.apiVersion)}`);
  if (s.status !== 'Failure') p.push(`status ${JSON.stringify(s.status)}`);
  if (typeof s.message !== 'string' || !s.message) p.push('no message');
  if (typeof s.reason !== 'string' || !s.reason) p.push('no reason');
  if (s.code !== code) p.push(`code ${JSON.stringify(s.code)} != HTTP ${code}`);
  return p;
}

const WATCH_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

function header(r: HttpReply, name: string): string {
  const v = r.headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}

/** Decodes the reply body by its Content-Type (and Content-Encoding); throws when it cannot. */
export function decodeReply(r: HttpReply, watch = false): { format: string; value: unknown } {
  let body = r.body;
  if (/gzip/i.test(header(r, 'content-encoding'))) body = gunzipSync(body);
  const ct = header(r, 'content-type').split(';')[0]!.trim().toLowerCase();
  // the service-account issuer's key set is JSON under its own media type (upstream's)
  if (ct === 'application/json' || ct === 'application/jwk-set+json' || ct === '') {
    if (ct === '' && body.length === 0) return { format: 'empty', value: undefined };
    const text = body.toString('utf8');
    if (watch && r.status === 200 && (text.trim() === '' || text.trimStart().startsWith('{"type":')))
      return { format: 'watch', value: watchLines(text, !!r.abortedByClient) };
    return { format: 'json', value: JSON.parse(text) };
  }
  if (ct === 'application/yaml') return { format: 'yaml', value: parseYaml(body.toString('utf8')) };
  if (ct === PROTOBUF_MEDIA_TYPE && /;\s*stream=watch/.test(header(r, 'content-type')))
    return { format: 'watch', value: watchFrames(body, !!r.abortedByClient) };
  if (ct === PROTOBUF_MEDIA_TYPE) return { format: 'protobuf', value: protobuf().decodeObject(new Uint8Array(body)) };
  if (ct === 'text/plain') return { format: 'text', value: body.toString('utf8') };
  throw new Error(`unexpected content type ${JSON.stringify(header(r, 'content-type'))}`);
}

/** Newline-delimited watch events; a stream the client cut may end in a partial line. */
function watchLines(text: string, cut: boolean): unknown[] {
  const lines = text.split('\n');
  const last = lines.pop();
  if (last && !cut) lines.push(last);
  return lines
    .filter((l) => l.trim())
    .map((l) => {
      const ev = JSON.parse(l);
      if (!WATCH_TYPES.has(ev.type) || !ev.object || typeof ev.object !== 'object')
        throw new Error(`bad watch event ${l.slice(0, 200)}`);
      if (ev.type === 'ERROR') {
        const p = statusProblems({ ...ev.object, status: ev.object.status }, ev.object.code);
        if (p.length) throw new Error(`bad ERROR event: ${p.join('; ')}`);
      }
      return ev;
    });
}

/** Length-prefixed Protobuf watch frames; a stream the client cut may end in a partial frame. */
function watchFrames(body: Buffer, cut: boolean): unknown[] {
  const { frames, rest } = ProtobufCodec.splitFrames(new Uint8Array(body));
  if (rest.length && !cut) throw new Error(`watch stream ends in ${rest.length} bytes of a partial frame`);
  return frames.map((f) => {
    const ev = protobuf().decodeWatchEvent(f);
    if (!WATCH_TYPES.has(ev.type) || !ev.object || typeof ev.object !== 'object')
      throw new Error(`bad watch event of type ${JSON.stringify(ev.type)}`);
    if (ev.type === 'ERROR') {
      const p = statusProblems({ ...ev.object, status: ev.object.status }, ev.object.code as number);
      if (p.length) throw new Error(`bad ERROR event: ${p.join('; ')}`);
    }
    return ev;
  });
}

/** connect subresources answer 503 (no endpoints) or 500 (the node agent cannot be dialed) as upstream when a node is unreachable */
const CONNECT = /\/(proxy|exec|attach|portforward|log)(\/|\?|$)/;

const TEXT_OK = /^\/+(healthz|livez|readyz)(\/|\?|$)|^\/metrics(\?|$)|\/pods\/[^/]+\/+log\/*(\?|$)/;

/** Problems with one reply (empty when it is acceptable). */
export function replyProblems(
  method: string,
  target: string,
  r: HttpReply,
  watch = false,
): { kind: string; detail: string }[] {
  const out: { kind: string; detail: string }[] = [];
  if (r.status >= 500 && r.status !== 504 && !((r.status === 503 || r.status === 500) && CONNECT.test(target)))
    out.push({ kind: '5xx', detail: `HTTP ${r.status}: ${r.body.subarray(0, 400).toString('utf8')}` });
  if (r.status < 100 || r.status > 599) out.push({ kind: 'bad-status', detail: `HTTP ${r.status}` });
  if (r.headBodyBytes)
    out.push({
      kind: 'head-with-body',
      detail: `HEAD response of HTTP ${r.status} carries ${r.headBodyBytes} body bytes`,
    });
  if (method === 'HEAD' || r.status === 204 || r.status === 304) return out;
  let decoded: { format: string; value: any };
  try {
    decoded = decodeReply(r, watch);
  } catch (e) {
    if (e instanceof RangeError) {
      // valid, but nested deeper than decoders recurse: the server stored it (no nesting-depth limit)
      out.push({ kind: 'too-deep-to-decode', detail: `HTTP ${r.status} ${r.body.length} B: ${e.message}` });
      return out;
    }
    out.push({
      kind: r.status >= 300 ? 'non-status-error' : 'undecodable-body',
      detail: `HTTP ${r.status}: ${(e as Error).message.slice(0, 200)}; body ${r.body.subarray(0, 160).toString('utf8')}`,
    });
    return out;
  }
  if (r.status === 503 && decoded.value?.reason !== 'ServiceUnavailable')
    out.push({ kind: '5xx', detail: `503 without reason ServiceUnavailable: ${r.body.subarray(0, 200)}` });
  if (r.status === 504 && !(decoded.value?.reason === 'Timeout'))
    out.push({ kind: '5xx', detail: `504 without reason Timeout: ${r.body.subarray(0, 200)}` });
  if (r.status >= 300) {
    if (decoded.format === 'text' && TEXT_OK.test(target)) return out;
    // upstream's OpenAPI handler answers an Accept it cannot serve with a bare 406 (kube-openapi)
    if (r.status === 406 && r.body.length === 0 && /^\/+openapi\//.test(target)) return out;
    if (decoded.format === 'text' || decoded.format === 'empty' || decoded.format === 'watch') {
      out.push({
        kind: 'non-status-error',
        detail: `HTTP ${r.status} ${decoded.format} body: ${r.body.subarray(0, 160).toString('utf8')}`,
      });
      return out;
    }
    // a connect subresource's plain Go error (an unreachable node agent, a node without addresses) is
    // upstream's ErrorToAPIStatus: 500 with no reason (src/kubelet/location.ts plainError)
    const plain = r.status === 500 && CONNECT.test(target);
    const p = statusProblems(decoded.value, r.status).filter((x) => !(plain && x === 'no reason'));
    if (p.length)
      out.push({
        kind: 'non-status-error',
        detail: `HTTP ${r.status} ${decoded.format}: ${p.join('; ')}: ${r.body.subarray(0, 200).toString('utf8')}`,
      });
    return out;
  }
  if (decoded.format === 'text' && !TEXT_OK.test(target))
    out.push({ kind: 'undecodable-body', detail: `text/plain 2xx on ${target.slice(0, 120)}` });
  const v = decoded.value;
  if (
    (decoded.format === 'json' || decoded.format === 'yaml' || decoded.format === 'protobuf') &&
    (v === null || typeof v !== 'object')
  ) {
    out.push({ kind: 'undecodable-body', detail: `2xx ${decoded.format} body is not an object` });
  }
  return out;
}

/** Problems with a stored object as listed or read (after the run). */
export function objectProblems(o: any, kind: string, apiVersion: string): string[] {
  const p: string[] = [];
  if (!o || typeof o !== 'object' || Array.isArray(o)) return ['not an object'];
  const m = o.metadata;
  if (!m || typeof m !== 'object') return ['no metadata'];
  if (typeof m.name !== 'string' || !m.name) p.push('no name');
  if (typeof m.uid !== 'string' || !m.uid) p.push('no uid');
  if (typeof m.resourceVersion !== 'string' || !/^[1-9][0-9]*$/.test(m.resourceVersion))
    p.push(`resourceVersion ${JSON.stringify(m.resourceVersion)}`);
  if (typeof m.creationTimestamp !== 'string' || Number.isNaN(Date.parse(m.creationTimestamp)))
    p.push(`creationTimestamp ${JSON.stringify(m.creationTimestamp)}`);
  if (o.kind !== undefined && o.kind !== kind) p.push(`kind ${JSON.stringify(o.kind)}`);
  if (o.apiVersion !== undefined && o.apiVersion !== apiVersion) p.push(`apiVersion ${JSON.stringify(o.apiVersion)}`);
  if (
    m.labels !== undefined &&
    (typeof m.labels !== 'object' ||
      Array.isArray(m.labels) ||
      Object.values(m.labels).some((x) => typeof x !== 'string'))
  )
    p.push('labels not a string map');
  if (
    m.annotations !== undefined &&
    (typeof m.annotations !== 'object' ||
      Array.isArray(m.annotations) ||
      Object.values(m.annotations).some((x) => typeof x !== 'string'))
  )
    p.push('annotations not a string map');
  return p;
}

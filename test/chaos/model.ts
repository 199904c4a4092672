/**
 * What the crash harness knows about each object it writes. Every key (type + name) belongs to
 * one writer, so at most one request per key is in flight: the expected state after a crash is
 * exactly "the last acknowledged version" or, if a request was in flight at the kill, "that
 * request's result, entirely". Versions are compared as integers here only (clients must
 * treat them as opaque; this harness checks the server's own ordering guarantee).
 */

export interface ChaosType {
  name: string;
  path: string;
  apiVersion: string;
  kind: string;
}

export const NS = 'chaos';
export const TYPES: ChaosType[] = [
  { name: 'configmaps', path: `/api/v1/namespaces/${NS}/configmaps`, apiVersion: 'v1', kind: 'ConfigMap' },
  { name: 'secrets', path: `/api/v1/namespaces/${NS}/secrets`, apiVersion: 'v1', kind: 'Secret' },
  {
    name: 'leases',
    path: `/apis/coordination.plat.io/v1/namespaces/${NS}/leases`,
    apiVersion: 'coordination.plat.io/v1',
    kind: 'Lease',
  },
];

const V = 'chaos.plat.io/v';
const PAD = 'chaos.plat.io/pad';
const SUM = 'chaos.plat.io/sum';

/** The content a write carries: a version tag and a padded payload with its checksum. */
export interface Content {
  v: string;
  pad: string;
}

export interface Version {
  uid: string;
  rv: bigint;
  content: Content;
}

export type Op = { kind: 'create' | 'update'; content: Content } | { kind: 'delete' };

export interface KeyState {
  type: ChaosType;
  name: string;
  /** last acknowledged state; undefined = absent */
  acked: Version | undefined;
  /** the request in flight when the server died (outcome unknown) */
  pending?: Op;
}

export function checksum(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16);
}

export function bodyFor(t: ChaosType, name: string, c: Content, rv?: bigint): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    name,
    namespace: NS,
    labels: { chaos: 'yes' },
    annotations: { [V]: c.v, [PAD]: c.pad, [SUM]: checksum(c.pad) },
  };
  if (rv !== undefined) metadata.resourceVersion = String(rv);
  const body: Record<string, unknown> = { apiVersion: t.apiVersion, kind: t.kind, metadata };
  if (t.kind === 'ConfigMap') body.data = { v: c.v };
  if (t.kind === 'Secret') body.data = { v: Buffer.from(c.v).toString('base64') };
  if (t.kind === 'Lease') body.spec = { holderIdentity: c.v, leaseDurationSeconds: 15 };
  return body;
}

/** Reads back the content of a stored object; problems if it is not wholly one written version. */
export function contentOf(t: ChaosType, obj: any): { content?: Content; problems: string[] } {
  const a = obj?.metadata?.annotations ?? {};
  const problems: string[] = [];
  const c: Content = { v: a[V], pad: a[PAD] };
  if (typeof c.v !== 'string' || typeof c.pad !== 'string') return { problems: ['missing chaos annotations'] };
  if (a[SUM] !== checksum(c.pad)) problems.push(`pad checksum ${a[SUM]} != ${checksum(c.pad)} (torn payload)`);
  const inner =
    t.kind === 'ConfigMap'
      ? obj.data?.v
      : t.kind === 'Secret'
        ? Buffer.from(obj.data?.v ?? '', 'base64').toString()
        : obj.spec?.holderIdentity;
  if (inner !== c.v)
    problems.push(`body field ${JSON.stringify(inner)} disagrees with annotation ${c.v} (torn object)`);
  return { content: c, problems };
}

export function sameContent(a: Content | undefined, b: Content | undefined): boolean {
  return !!a && !!b && a.v === b.v && a.pad === b.pad;
}

/**
 * Checks the object found after restart (undefined = 404) against the key's history; returns
 * problems, and the version now known to be stored.
 */
export function judge(
  k: KeyState,
  found: any,
): { problems: string[]; lost?: string; now: Version | undefined; applied?: boolean } {
  const id = `${k.type.name}/${k.name}`;
  if (found === undefined) {
    if (!k.acked) return { problems: [], now: undefined };
    if (k.pending?.kind === 'delete') return { problems: [], now: undefined, applied: true };
    return {
      problems: [`${id}: acknowledged version ${k.acked.content.v} (rv ${k.acked.rv}) is gone`],
      lost: id,
      now: undefined,
    };
  }
  const { content, problems } = contentOf(k.type, found);
  const out = problems.map((p) => `${id}: ${p}`);
  const now: Version | undefined = content
    ? { uid: found.metadata.uid, rv: BigInt(found.metadata.resourceVersion), content }
    : undefined;
  if (!now) return { problems: out, now };
  const pendingContent = k.pending && k.pending.kind !== 'delete' ? k.pending.content : undefined;
  if (k.acked && sameContent(now.content, k.acked.content)) {
    if (now.uid !== k.acked.uid) out.push(`${id}: uid ${now.uid} != acknowledged ${k.acked.uid}`);
    if (now.rv !== k.acked.rv)
      out.push(`${id}: resourceVersion ${now.rv} != acknowledged ${k.acked.rv} for the same content`);
    return { problems: out, now };
  }
  if (sameContent(now.content, pendingContent)) {
    if (k.acked && k.pending!.kind === 'update' && now.uid !== k.acked.uid)
      out.push(`${id}: update in flight changed the uid`);
    if (k.acked && now.rv <= k.acked.rv)
      out.push(`${id}: in-flight write stored at rv ${now.rv}, not above acknowledged ${k.acked.rv}`);
    return { problems: out, now, applied: true };
  }
  if (!k.acked)
    out.push(`${id}: exists (${now.content.v}) but no create was acknowledged or in flight with that content`);
  else
    out.push(
      `${id}: content ${now.content.v} is neither the acknowledged ${k.acked.content.v} nor the in-flight ${pendingContent?.v ?? k.pending?.kind ?? 'none'}`,
    );
  return { problems: out, lost: k.acked ? id : undefined, now };
}

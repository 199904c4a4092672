/**
 * The BootstrapSigner (upstream pkg/controller/bootstrap/bootstrapsigner.go), enabled with
 * `--controllers=*,bootstrapsigner`: keeps the `cluster-info` ConfigMap of the public
 * namespace signed. For every unexpired bootstrap token marked `usage-bootstrap-signing` it
 * stores `jws-kubeconfig-<token-id>`: a detached compact JWS (header..signature, HS256, header
 * `kid` = the token id) of the `kubeconfig` value, keyed with the full token `<id>.<secret>`.
 * Signatures of other tokens are removed; the ConfigMap is written only when they change. It
 * re-signs on token and cluster-info changes and when a signing token expires.
 */
import { CompactSign } from 'jose';
import { bodyText } from '../actors/pack.js';
import type { CachedObject, ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import type { Identity } from '../api/identity.js';
import type { ActorPool } from '../actors/pool.js';
import { bootstrapToken, validForSigning, type BootstrapToken } from './bootstrap-token.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const CONFIGMAPS: TypeRef = { group: '', version: 'v1', resource: 'configmaps' };
const SECRETS_KEY = '/secrets',
  CONFIGMAPS_KEY = '/configmaps';
export const CLUSTER_INFO = 'cluster-info';
export const KUBECONFIG_KEY = 'kubeconfig';
export const SIGNATURE_PREFIX = 'jws-kubeconfig-';
const MAX_DELAY_MS = 2 ** 31 - 1;

/** upstream jws.ComputeDetachedSignature: the compact JWS without its payload. */
export async function detachedSignature(content: string, tokenId: string, tokenSecret: string): Promise<string> {
  const jws = await new CompactSign(new TextEncoder().encode(content))
    .setProtectedHeader({ alg: 'HS256', kid: tokenId })
    .sign(new TextEncoder().encode(`${tokenId}.${tokenSecret}`));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

export class BootstrapSigner implements Informer {
  private readonly tokens = new Map<string, BootstrapToken>();
  private clusterInfo = false;
  private running = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    private readonly identity: Identity,
    private readonly now: () => number = Date.now,
  ) {}

  load(objects: readonly CachedObject[]): void {
    for (const o of objects) this.take(o.typeKey, o.namespace, o.name, o.json);
    this.changed();
  }

  observe(events: readonly ChangeEvent[]): void {
    let touched = false;
    for (const ev of events)
      touched = this.take(ev.typeKey, ev.namespace, ev.name, ev.type === 'DELETED' ? undefined : ev.json) || touched;
    if (touched) this.changed();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Records a token secret or the cluster-info ConfigMap; true when it is one of them. */
  private take(typeKey: string, namespace: string, name: string, json: string | undefined): boolean {
    if (typeKey === CONFIGMAPS_KEY && namespace === this.identity.publicNamespace && name === CLUSTER_INFO) {
      this.clusterInfo = json !== undefined;
      return true;
    }
    if (typeKey !== SECRETS_KEY || namespace !== this.identity.systemNamespace) return false;
    const had = this.tokens.delete(name);
    const t = json === undefined ? undefined : bootstrapToken(JSON.parse(json), this.identity);
    if (t) this.tokens.set(name, t);
    return had || !!t;
  }

  /** Signs soon; one pass at a time, and one more if something changed meanwhile. */
  private changed(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    setImmediate(() => {
      this.sign()
        .catch((e) => process.stderr.write(`warning: bootstrapsigner: ${(e as Error).message}\n`))
        .finally(() => {
          this.running = false;
          if (this.again) {
            this.again = false;
            this.changed();
          }
        });
    });
  }

  private async sign(): Promise<void> {
    this.arm();
    if (!this.clusterInfo) return;
    const got = await this.pool.submit({
      op: 'get',
      type: CONFIGMAPS,
      enc: JSON_ENC,
      namespace: this.identity.publicNamespace,
      name: CLUSTER_INFO,
    });
    if ('error' in got || !('code' in got)) return;
    const cm = JSON.parse(bodyText(got.body));
    const content = cm.data?.[KUBECONFIG_KEY];
    if (typeof content !== 'string') return;
    const data: Record<string, string> = {};
    const old: Record<string, string> = {};
    for (const [k, v] of Object.entries<string>(cm.data)) (k.startsWith(SIGNATURE_PREFIX) ? old : data)[k] = v;
    const now = this.now();
    for (const [name, t] of this.tokens) {
      if (validForSigning(name, t, now))
        data[SIGNATURE_PREFIX + t.id] = await detachedSignature(content, t.id, t.secret);
    }
    const fresh = Object.keys(data).filter((k) => k.startsWith(SIGNATURE_PREFIX));
    const same = fresh.length === Object.keys(old).length && fresh.every((k) => old[k] === data[k]);
    if (same) return;
    cm.data = data;
    const r = await this.pool.submit({
      op: 'update',
      type: CONFIGMAPS,
      enc: JSON_ENC,
      dryRun: false,
      namespace: this.identity.publicNamespace,
      name: CLUSTER_INFO,
      body: { text: JSON.stringify(cm), contentType: 'json' },
    });
    // a conflict means cluster-info changed meanwhile: its change event signs again
    if ('error' in r && r.error.code !== 409) throw new Error(`updating ${CLUSTER_INFO}: ${r.error.message}`);
  }

  /** Wakes up when the next signing token expires, so its signature goes. */
  private arm(): void {
    clearTimeout(this.timer);
    const now = this.now();
    let next: number | undefined;
    for (const [name, t] of this.tokens)
      if (t.expires !== undefined && validForSigning(name, t, now)) next = Math.min(next ?? t.expires, t.expires);
    if (next === undefined || this.stopped) return;
    this.timer = setTimeout(() => this.changed(), Math.min(MAX_DELAY_MS, next - now + 1));
    this.timer.unref();
  }
}

/**
 * The resource quota controller (upstream resourcequota-controller), front thread: keeps every
 * ResourceQuota's `status.hard` (its spec) and `status.used` (src/admission/quota-usage.ts)
 * current. A namespace is recomputed shortly after a change to any of its objects (coalesced
 * per namespace) when it holds quotas; the status is written only when it differs.
 */
import type { ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { ActorPool } from '../actors/pool.js';
import type { ReadCache } from '../actors/read-cache.js';
import { formatQuantity, namespaceUsage } from '../admission/quota-usage.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const QUOTAS: TypeRef = { group: '', version: 'v1', resource: 'resourcequotas', subresource: 'status' };
const DELAY_MS = 50;

export class ResourceQuotaController {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private started = false;

  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    private readonly readCache: ReadCache,
  ) {}

  start(): void {
    this.started = true;
    for (const json of this.allQuotas()) this.pending.add(JSON.parse(json).metadata.namespace);
    this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  observe(evs: readonly ChangeEvent[]): void {
    if (this.readCache.count('/resourcequotas') === 0) return;
    for (const ev of evs) if (ev.namespace) this.pending.add(ev.namespace);
    this.schedule();
  }

  private *allQuotas(): Iterable<string> {
    // quotas are few; the scan of namespaces goes through the quota type only
    const seen = new Set<string>();
    for (const ns of this.namespaces())
      if (!seen.has(ns)) {
        seen.add(ns);
        yield* this.readCache.inNamespace('/resourcequotas', ns);
      }
  }

  private namespaces(): string[] {
    return [...this.readCache.inNamespace('/namespaces', '')].map((j) => JSON.parse(j).metadata.name);
  }

  private schedule(): void {
    if (!this.started || this.timer || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sync();
    }, DELAY_MS);
    this.timer.unref();
  }

  private sync(): void {
    const namespaces = [...this.pending];
    this.pending.clear();
    for (const ns of namespaces) {
      for (const json of this.readCache.inNamespace('/resourcequotas', ns)) {
        const q = JSON.parse(json);
        const hard: Record<string, string> = q.spec?.hard ?? {};
        const usage = namespaceUsage(this.readCache, ns, Object.keys(hard));
        const used = Object.fromEntries(
          Object.keys(hard)
            .sort()
            .map((k) => [k, formatQuantity(usage[k] ?? 0)]),
        );
        const status = {
          hard: Object.fromEntries(
            Object.keys(hard)
              .sort()
              .map((k) => [k, hard[k]]),
          ),
          used,
        };
        if (JSON.stringify(q.status ?? {}) === JSON.stringify(status)) continue;
        q.status = status;
        void this.pool
          .submit({
            op: 'update',
            type: QUOTAS,
            enc: JSON_ENC,
            dryRun: false,
            namespace: ns,
            name: q.metadata.name,
            body: { text: JSON.stringify(q), contentType: 'json' },
          })
          .then((r) => {
            if ('error' in r && r.error.code === 409) {
              this.pending.add(ns);
              this.schedule();
            }
          });
      }
    }
  }
}

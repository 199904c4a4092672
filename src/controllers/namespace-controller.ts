/**
 * The namespace controller (front thread): when a namespace is Terminating it deletes every
 * namespaced object in it through the actors (objects with finalizers stay until released),
 * reports progress in the namespace conditions, and once the namespace is empty removes the
 * spec finalizer (the product word: `platform`, `kubernetes`) through `namespaces/<name>/finalize`, which completes deletion.
 */
import { bodyText } from '../actors/pack.js';
import type { ActorPool } from '../actors/pool.js';
import type { Namespace } from '../api/kinds.js';
import { isRecord } from '../api/object.js';
import type { Registry } from '../registry/registry.js';
import { typeKeyOf } from '../actors/routing.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const NS_TYPE = { group: '', version: 'v1', resource: 'namespaces' };

export class NamespaceController {
  private readonly active = new Set<string>();
  private stopped = false;

  constructor(
    private readonly pool: ActorPool,
    private readonly registry: Registry,
    private readonly retryMs = 500,
  ) {}

  /** Called for every namespace change; starts cleanup once per terminating namespace. */
  observe(value: unknown): void {
    const ns: Namespace | undefined = isRecord(value) ? value : undefined;
    const name = ns?.metadata?.name;
    if (!name || !ns.metadata!.deletionTimestamp || this.active.has(name)) return;
    if (!(ns.spec?.finalizers ?? []).includes(this.registry.identity.product)) return;
    this.active.add(name);
    void this.cleanup(name).finally(() => this.active.delete(name));
  }

  stop(): void {
    this.stopped = true;
  }

  private namespacedTypes() {
    const seen = new Set<string>();
    return this.registry.allEnabled().filter((d) => {
      const k = typeKeyOf(d.group, d.resource);
      if (!d.namespaced || !d.verbs.includes('list') || seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  }

  private async cleanup(name: string): Promise<void> {
    while (!this.stopped) {
      const remaining = await this.deleteAll(name);
      if (remaining === 0) break;
      await this.setCondition(name, remaining);
      await new Promise((r) => setTimeout(r, this.retryMs));
    }
    if (!this.stopped) await this.finalize(name);
  }

  /** Deletes what it can; returns how many objects remain (held by finalizers). */
  private async deleteAll(name: string): Promise<number> {
    const counts = await Promise.all(
      this.namespacedTypes().map(async (d) => {
        const type = { group: d.group, version: d.version, resource: d.resource };
        await this.pool.submit({
          op: 'deletecollection',
          type,
          enc: JSON_ENC,
          dryRun: false,
          namespace: name,
          opts: {},
          options: {},
        });
        const r = await this.pool.submit({ op: 'list', type, enc: JSON_ENC, namespace: name, opts: {} });
        return 'code' in r ? (JSON.parse(bodyText(r.body)).items?.length ?? 0) : 0;
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  private async current(name: string): Promise<Namespace | undefined> {
    const r = await this.pool.submit({ op: 'get', type: NS_TYPE, enc: JSON_ENC, namespace: '', name });
    return 'code' in r ? JSON.parse(bodyText(r.body)) : undefined;
  }

  private async setCondition(name: string, remaining: number): Promise<void> {
    const ns = await this.current(name);
    if (!ns) return;
    const condition = {
      type: 'NamespaceContentRemaining',
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: `Some resources are remaining: ${remaining} objects`,
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    const conditions = (ns.status?.conditions ?? []).filter((c) => c.type !== condition.type);
    ns.status = { ...(ns.status ?? {}), conditions: [...conditions, condition] };
    await this.pool.submit({
      op: 'update',
      type: { ...NS_TYPE, subresource: 'status' },
      enc: JSON_ENC,
      dryRun: false,
      namespace: '',
      name,
      body: { text: JSON.stringify(ns), contentType: 'json' },
    });
  }

  private async finalize(name: string): Promise<void> {
    for (let attempt = 0; attempt < 10 && !this.stopped; attempt++) {
      const ns = await this.current(name);
      if (!ns) return;
      ns.spec = {
        ...(ns.spec ?? {}),
        finalizers: (ns.spec?.finalizers ?? []).filter((f: string) => f !== this.registry.identity.product),
      };
      const r = await this.pool.submit({
        op: 'update',
        type: { ...NS_TYPE, subresource: 'finalize' },
        enc: JSON_ENC,
        dryRun: false,
        namespace: '',
        name,
        body: { text: JSON.stringify(ns), contentType: 'json' },
      });
      if (!('error' in r) || r.error.code !== 409) return;
    }
  }
}

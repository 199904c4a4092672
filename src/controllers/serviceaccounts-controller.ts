/**
 * The service account controller (upstream serviceaccounts-controller): every active namespace
 * has a ServiceAccount named `default`; it is created when the namespace appears (and at
 * start for namespaces without one) and again when deleted while its namespace is active.
 * Fed by the change events; writes are ordinary creates (an AlreadyExists is success).
 */
import type { ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { ActorPool } from '../server/actor-pool.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const SERVICE_ACCOUNTS: TypeRef = { group: '', version: 'v1', resource: 'serviceaccounts' };
const NAMESPACES_KEY = '/namespaces';
const SA_KEY = '/serviceaccounts';
export const DEFAULT_SERVICE_ACCOUNT = 'default';

export class ServiceAccountsController {
  /** namespaces seen active, and those whose default account is known to exist */
  private readonly active = new Set<string>();
  private readonly present = new Set<string>();
  private readonly inflight = new Set<string>();
  private started = false;

  constructor(private readonly pool: Pick<ActorPool, 'submit'>) {}

  /** The state at start (before start()). */
  load(objects: { typeKey: string; namespace: string; name: string; json: string }[]): void {
    for (const o of objects) {
      if (o.typeKey === SA_KEY && o.name === DEFAULT_SERVICE_ACCOUNT) this.present.add(o.namespace);
      if (o.typeKey === NAMESPACES_KEY && !JSON.parse(o.json).metadata?.deletionTimestamp) this.active.add(o.name);
    }
  }

  start(): void {
    this.started = true;
    for (const ns of this.active) this.ensure(ns);
  }

  observe(evs: ChangeEvent[]): void {
    for (const ev of evs) {
      if (ev.typeKey === NAMESPACES_KEY) {
        if (ev.type === 'DELETED' || ev.deleting || ev.json.includes('"deletionTimestamp"')) this.active.delete(ev.name);
        else { this.active.add(ev.name); this.ensure(ev.name); }
      } else if (ev.typeKey === SA_KEY && ev.name === DEFAULT_SERVICE_ACCOUNT) {
        if (ev.type === 'DELETED') { this.present.delete(ev.namespace); this.ensure(ev.namespace); } else this.present.add(ev.namespace);
      }
    }
  }

  private ensure(ns: string): void {
    if (!this.started || !this.active.has(ns) || this.present.has(ns) || this.inflight.has(ns)) return;
    this.inflight.add(ns);
    const body = { text: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT } }), contentType: 'json' as const };
    void this.pool.submit({ op: 'create', type: SERVICE_ACCOUNTS, enc: JSON_ENC, dryRun: false, namespace: ns, body })
      .then((res) => { if (!('error' in res) || res.error.code === 409) this.present.add(ns); })
      .finally(() => this.inflight.delete(ns));
  }
}

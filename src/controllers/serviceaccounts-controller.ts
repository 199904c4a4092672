/**
 * The service account controller (upstream serviceaccounts-controller) and the root CA
 * publisher (upstream root-ca-cert-publisher): every active namespace has a ServiceAccount
 * named `default` and, when the cluster CA is known, the ConfigMap `<short>-root-ca.crt`
 * (`ca.crt`: the CA PEM) that the ServiceAccount plugin's token volume names. Both are created
 * when the namespace appears (and at start where missing) and again when deleted while the
 * namespace is active. Fed by the change events; existence is read from the read cache;
 * writes are ordinary creates (an AlreadyExists is success).
 */
import type { ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import type { ActorPool } from '../actors/pool.js';
import type { ReadCache } from '../actors/read-cache.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const SERVICE_ACCOUNTS: TypeRef = { group: '', version: 'v1', resource: 'serviceaccounts' };
const CONFIG_MAPS: TypeRef = { group: '', version: 'v1', resource: 'configmaps' };
const NAMESPACES_KEY = '/namespaces';
export const DEFAULT_SERVICE_ACCOUNT = 'default';

export class ServiceAccountsController implements Informer {
  private readonly active = new Set<string>();
  private readonly inflight = new Set<string>();
  private started = false;

  /** rootCA: the CA PEM to publish (read at start), or undefined for none. */
  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    private readonly readCache: ReadCache,
    private readonly rootCAName: string,
    private readonly rootCA: () => string | undefined,
  ) {}

  private ca: string | undefined;

  /** The namespaces at start (before start()). */
  load(objects: readonly { typeKey: string; name: string; json: string }[]): void {
    for (const o of objects)
      if (o.typeKey === NAMESPACES_KEY && !JSON.parse(o.json).metadata?.deletionTimestamp) this.active.add(o.name);
  }

  start(): void {
    this.started = true;
    this.ca = this.rootCA();
    for (const ns of this.active) this.ensure(ns);
  }

  observe(evs: readonly ChangeEvent[]): void {
    for (const ev of evs) {
      if (ev.typeKey === NAMESPACES_KEY) {
        if (ev.type === 'DELETED' || ev.deleting || ev.json.includes('"deletionTimestamp"'))
          this.active.delete(ev.name);
        else {
          this.active.add(ev.name);
          this.ensure(ev.name);
        }
      } else if (
        ev.type === 'DELETED' &&
        ((ev.typeKey === '/serviceaccounts' && ev.name === DEFAULT_SERVICE_ACCOUNT) ||
          (ev.typeKey === '/configmaps' && ev.name === this.rootCAName))
      ) {
        this.ensure(ev.namespace);
      }
    }
  }

  private ensure(ns: string): void {
    if (!this.started || !this.active.has(ns)) return;
    if (this.readCache.get('/serviceaccounts', ns, DEFAULT_SERVICE_ACCOUNT, 'v1') === undefined) {
      this.create(ns, SERVICE_ACCOUNTS, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: DEFAULT_SERVICE_ACCOUNT },
      });
    }
    if (this.ca && this.readCache.get('/configmaps', ns, this.rootCAName, 'v1') === undefined) {
      this.create(ns, CONFIG_MAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: this.rootCAName },
        data: { 'ca.crt': this.ca },
      });
    }
  }

  private create(ns: string, type: TypeRef, obj: object): void {
    const key = `${type.resource}/${ns}`;
    if (this.inflight.has(key)) return;
    this.inflight.add(key);
    const body = { text: JSON.stringify(obj), contentType: 'json' as const };
    void this.pool
      .submit({ op: 'create', type, enc: JSON_ENC, dryRun: false, namespace: ns, body })
      .finally(() => this.inflight.delete(key));
  }
}

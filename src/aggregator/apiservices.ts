/**
 * The APIServices of the aggregation layer (upstream kube-aggregator), on the front thread:
 * - local APIServices (`<version>.<group>`, `v1.` for the core group) for every built-in
 *   group-version, created at start with upstream's priorities and `Available=True` (Local);
 * - the remote ones (with `spec.service`), kept current from the change events: each is
 *   checked (service, endpoints, then a GET of `/apis/<group>/<version>` on the extension
 *   server with the proxy client certificate) when it changes, when its Service or Endpoints
 *   change, after a failed proxied request and every `apiServiceCheckIntervalMs`; the result
 *   is written to `status.conditions[Available]` (reasons Passed, ServiceNotFound,
 *   ServicePortError, MissingEndpoints, FailedDiscoveryCheck) only when it changes, and the
 *   discovery document fetched feeds aggregated discovery.
 */
import { groupFor, type Identity } from '../api/identity.js';
import type { Condition } from '../api/object.js';
import type { CachedObject, ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import { typeKeyOf } from '../actors/routing.js';
import type { ActorPool } from '../actors/pool.js';
import type { ReadCache } from '../actors/read-cache.js';
import type { Registry } from '../registry/registry.js';
import { resolveService, type ServiceAddress } from '../actors/service-resolver.js';
import { fetchJson, type TlsMaterial } from './transport.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const CHECK_TIMEOUT_MS = 5000;

/** upstream apiVersionPriorities (reference group names): [groupPriorityMinimum, versionPriority] */
const PRIORITIES: Record<string, [number, number]> = {
  '/v1': [18000, 1],
  'apiregistration.plat.io/v1': [18000, 15],
  'apps/v1': [17800, 15],
  'events.plat.io/v1': [17750, 15],
  'authentication.plat.io/v1': [17700, 15],
  'authorization.plat.io/v1': [17600, 15],
  'autoscaling/v1': [17500, 15],
  'autoscaling/v2': [17500, 30],
  'batch/v1': [17400, 15],
  'certificates.plat.io/v1': [17300, 15],
  'networking.plat.io/v1': [17200, 15],
  'policy/v1': [17100, 15],
  'rbac.authorization.plat.io/v1': [17000, 15],
  'storage.plat.io/v1': [16800, 15],
  'apiextensions.plat.io/v1': [16700, 15],
  'admissionregistration.plat.io/v1': [16700, 15],
  'scheduling.plat.io/v1': [16600, 15],
  'coordination.plat.io/v1': [16500, 15],
  'node.plat.io/v1': [16300, 15],
  'discovery.plat.io/v1': [16200, 15],
  'flowcontrol.apiserver.plat.io/v1': [16100, 21],
};

export interface RemoteService {
  name: string;
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  service: { namespace: string; name: string; port: number };
  caBundle?: string;
  insecureSkipTLSVerify: boolean;
  available: boolean;
  /** the extension server's APIResourceList from the last passed check */
  resources?: unknown;
}

export class ApiServices implements Informer {
  private readonly typeKey: string;
  private readonly type: TypeRef;
  private readonly remote = new Map<string, RemoteService>();
  private readonly byGroupVersion = new Map<string, RemoteService>();
  /** spec JSON last checked per APIService (a status write must not trigger another check) */
  private readonly checkedSpec = new Map<string, string>();
  private readonly checking = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly identity: Identity,
    private readonly registry: Registry,
    private readonly pool: Pick<ActorPool, 'submit'>,
    private readonly readCache: ReadCache,
    private readonly tls: TlsMaterial,
    private readonly intervalMs: number,
  ) {
    const group = groupFor(identity, 'apiregistration.plat.io');
    this.typeKey = typeKeyOf(group, 'apiservices');
    this.type = { group, version: 'v1', resource: 'apiservices' };
  }

  /** The remote APIService serving group/version, if any. */
  remoteFor(group: string, version: string): RemoteService | undefined {
    return this.byGroupVersion.get(`${group}/${version}`);
  }

  /** Every remote APIService, by group (for discovery). */
  remoteGroups(): Map<string, RemoteService[]> {
    const out = new Map<string, RemoteService[]>();
    for (const s of this.remote.values()) out.set(s.group, [...(out.get(s.group) ?? []), s]);
    for (const list of out.values())
      list.sort((a, b) => b.versionPriority - a.versionPriority || (a.version < b.version ? -1 : 1));
    return out;
  }

  load(objects: readonly CachedObject[]): void {
    for (const o of objects) if (o.typeKey === this.typeKey) this.set(o.name, o.json);
  }

  observe(evs: readonly ChangeEvent[]): void {
    for (const ev of evs) {
      if (ev.typeKey === this.typeKey) this.set(ev.name, ev.type === 'DELETED' ? undefined : ev.json);
      else if (ev.typeKey === '/services' || ev.typeKey === '/endpoints') {
        for (const s of this.remote.values())
          if (s.service.namespace === ev.namespace && s.service.name === ev.name) this.check(s.name);
      }
    }
  }

  /** Creates the missing local APIServices, checks the remote ones, and keeps checking. */
  async start(): Promise<void> {
    const wanted: Promise<unknown>[] = [];
    for (const g of this.registry.groups()) {
      for (const version of g.versions) wanted.push(this.ensureLocal(g.name, version));
    }
    await Promise.all(wanted);
    for (const name of this.remote.keys()) this.check(name);
    this.timer = setInterval(() => {
      for (const name of this.remote.keys()) this.check(name);
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** After a failed proxied request: look again now. */
  recheck(name: string): void {
    this.check(name);
  }

  /** Where to dial a remote APIService, or why not. */
  resolve(s: RemoteService): { address: ServiceAddress } | { reason: string; message: string } {
    return resolveService(this.readCache, s.service.namespace, s.service.name, s.service.port);
  }

  private set(name: string, json: string | undefined): void {
    const old = this.remote.get(name);
    if (old) {
      this.remote.delete(name);
      this.byGroupVersion.delete(`${old.group}/${old.version}`);
    }
    if (json === undefined) {
      this.checkedSpec.delete(name);
      return;
    }
    const obj = JSON.parse(json);
    const spec = obj.spec ?? {};
    if (!spec.service) return;
    const available = (obj.status?.conditions ?? []).some(
      (c: Condition | null) => c?.type === 'Available' && c.status === 'True',
    );
    const s: RemoteService = {
      name,
      group: String(spec.group ?? ''),
      version: String(spec.version ?? ''),
      groupPriorityMinimum: Number(spec.groupPriorityMinimum ?? 0),
      versionPriority: Number(spec.versionPriority ?? 0),
      service: {
        namespace: String(spec.service.namespace ?? ''),
        name: String(spec.service.name ?? ''),
        port: Number(spec.service.port ?? 443),
      },
      insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
      available,
      resources: old?.resources,
      ...(spec.caBundle ? { caBundle: Buffer.from(String(spec.caBundle), 'base64').toString('utf8') } : {}),
    };
    this.remote.set(name, s);
    this.byGroupVersion.set(`${s.group}/${s.version}`, s);
    const specJson = JSON.stringify(spec);
    if (this.checkedSpec.get(name) !== specJson) {
      this.checkedSpec.set(name, specJson);
      this.check(name);
    }
  }

  private async ensureLocal(group: string, version: string): Promise<void> {
    const name = `${version}.${group}`;
    const existing = this.readCache.get(this.typeKey, '', name, `${this.type.group}/v1`);
    if (
      existing &&
      JSON.parse(existing).status?.conditions?.some(
        (c: Condition | null) => c?.type === 'Available' && c.reason === 'Local',
      )
    )
      return;
    const [groupPriorityMinimum, versionPriority] = PRIORITIES[`${referenceName(this.identity, group)}/${version}`] ?? [
      1000, 15,
    ];
    const obj = {
      apiVersion: `${this.type.group}/v1`,
      kind: 'APIService',
      metadata: { name, labels: { [`kube-aggregator.${this.identity.product}.io/automanaged`]: 'onstart' } },
      spec: { ...(group ? { group } : {}), version, groupPriorityMinimum, versionPriority },
    };
    if (!existing) {
      const r = await this.pool.submit({
        op: 'create',
        type: this.type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: '',
        body: { text: JSON.stringify(obj), contentType: 'json' },
      });
      if ('error' in r && r.error.code !== 409) return;
    }
    await this.writeStatus(name, {
      status: 'True',
      reason: 'Local',
      message: 'Local APIServices are always available',
    });
  }

  private check(name: string): void {
    if (this.checking.has(name)) return;
    const s = this.remote.get(name);
    if (!s) return;
    this.checking.add(name);
    void this.probe(s)
      .then((cond) => {
        const cur = this.remote.get(name);
        if (cur) {
          cur.available = cond.status === 'True';
          if (cond.resources) cur.resources = cond.resources;
        }
        return this.writeStatus(name, cond);
      })
      .finally(() => this.checking.delete(name));
  }

  private async probe(
    s: RemoteService,
  ): Promise<{ status: 'True' | 'False'; reason: string; message: string; resources?: unknown }> {
    const r = this.resolve(s);
    if ('reason' in r) return { status: 'False', reason: r.reason, message: r.message };
    const url = `https://${r.address.host}:${r.address.port}/apis/${s.group}/${s.version}`;
    try {
      const resources = await fetchJson(
        url,
        {
          ...this.tls,
          ...(s.caBundle ? { ca: s.caBundle } : {}),
          servername: r.address.servername,
          insecure: s.insecureSkipTLSVerify,
        },
        CHECK_TIMEOUT_MS,
      );
      return { status: 'True', reason: 'Passed', message: 'all checks passed', resources };
    } catch (e) {
      return {
        status: 'False',
        reason: 'FailedDiscoveryCheck',
        message: `failing or missing response from ${url}: ${(e as Error).message}`,
      };
    }
  }

  /** Writes the Available condition when it differs from the stored one (transition time kept otherwise). */
  private async writeStatus(name: string, cond: { status: string; reason: string; message: string }): Promise<void> {
    const json = this.readCache.get(this.typeKey, '', name, `${this.type.group}/v1`);
    if (!json) return;
    const obj = JSON.parse(json);
    const conditions: (Condition | null)[] = obj.status?.conditions ?? [];
    const old = conditions.find((c) => c?.type === 'Available');
    if (old && old.status === cond.status && old.reason === cond.reason && old.message === cond.message) return;
    const next = {
      type: 'Available',
      status: cond.status,
      lastTransitionTime:
        old?.status === cond.status ? old.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      reason: cond.reason,
      message: cond.message,
    };
    obj.status = { ...obj.status, conditions: [...conditions.filter((c) => c?.type !== 'Available'), next] };
    await this.pool.submit({
      op: 'update',
      type: { ...this.type, subresource: 'status' },
      enc: JSON_ENC,
      dryRun: false,
      namespace: '',
      name,
      body: { text: JSON.stringify(obj), contentType: 'json' },
    });
  }
}

function referenceName(identity: Identity, group: string): string {
  return identity.domain === 'plat.io' || !group.endsWith(identity.domain)
    ? group
    : group.slice(0, -identity.domain.length) + 'plat.io';
}

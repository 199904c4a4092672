/**
 * The disruption controller (front thread): keeps every PodDisruptionBudget's status current
 * from the pod and PDB change events, as upstream's controller does:
 * - expectedPods: pods matching the selector in the PDB's namespace (nil selects none, {} all);
 * - currentHealthy: those not deleting, Running with condition Ready=True, and not recorded in
 *   status.disruptedPods (an eviction the controller has not yet seen complete);
 * - desiredHealthy: minAvailable (int, or percent of expectedPods rounded up), or expectedPods
 *   minus maxUnavailable (int, or percent rounded up), never below 0;
 * - disruptionsAllowed = max(0, currentHealthy - desiredHealthy), observedGeneration and the
 *   DisruptionAllowed condition.
 * disruptedPods entries are dropped once the pod is gone or deleting, or after 2 minutes.
 * Writes go through the status subresource; a conflict is retried on the next event.
 */
import { bodyText } from '../actors/pack.js';
import type { ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { ActorPool } from '../actors/pool.js';
import type { Pod, PodDisruptionBudget } from '../api/kinds.js';
import type { KubeObject, Stored } from '../api/object.js';
import { computeStatus, podHealthy, same, type PodRec } from '../registry/disruption-status.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const PODS: TypeRef = { group: '', version: 'v1', resource: 'pods' };
const PDBS: TypeRef = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' };
const PODS_KEY = '/pods';
const PDBS_KEY = 'policy/poddisruptionbudgets';
export class DisruptionController {
  /** namespace -> pod name -> what the controller needs of it */
  private readonly pods = new Map<string, Map<string, PodRec>>();
  /** namespace -> PDB name -> its newest object */
  private readonly pdbs = new Map<string, Map<string, Stored<PodDisruptionBudget>>>();
  private ready = false;
  private readonly busy = new Set<string>();
  private readonly dirty = new Set<string>();

  constructor(private readonly pool: ActorPool) {}

  /** Loads pods and PDBs, then brings every budget's status up to date. */
  async start(): Promise<void> {
    for (const [type, key] of [
      [PODS, PODS_KEY],
      [PDBS, PDBS_KEY],
    ] as const) {
      const r = await this.pool.submit({ op: 'list', type, enc: JSON_ENC, namespace: '', opts: {} });
      if (!('code' in r)) continue;
      for (const o of JSON.parse(bodyText(r.body)).items ?? []) this.track(key, o, false);
    }
    this.ready = true;
    for (const [ns, m] of this.pdbs) for (const name of m.keys()) this.sync(ns, name);
  }

  observe(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      if (ev.typeKey !== PODS_KEY && ev.typeKey !== PDBS_KEY) continue;
      const obj = JSON.parse(ev.json);
      this.track(ev.typeKey, obj, ev.type === 'DELETED');
      if (!this.ready) continue;
      if (ev.typeKey === PDBS_KEY) {
        if (ev.type !== 'DELETED') this.sync(ev.namespace, ev.name);
        continue;
      }
      for (const name of this.pdbs.get(ev.namespace)?.keys() ?? []) this.sync(ev.namespace, name);
    }
  }

  private track(typeKey: string, obj: Stored<KubeObject>, deleted: boolean): void {
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name;
    const index: Map<string, Map<string, unknown>> = typeKey === PODS_KEY ? this.pods : this.pdbs;
    let m = index.get(ns);
    if (deleted) {
      m?.delete(name);
      if (m?.size === 0) index.delete(ns);
      return;
    }
    if (!m) index.set(ns, (m = new Map()));
    if (typeKey === PDBS_KEY) {
      m.set(name, obj);
      return;
    }
    m.set(name, {
      name,
      labels: obj.metadata.labels,
      healthy: podHealthy(obj as Pod), // typeKey is the pods' one
      deleting: !!obj.metadata.deletionTimestamp,
    });
  }

  /** One sync per budget at a time; an event arriving meanwhile runs it once more afterwards. */
  private sync(ns: string, name: string): void {
    const key = `${ns}/${name}`;
    if (this.busy.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.busy.add(key);
    this.write(ns, name)
      .catch(() => undefined)
      .finally(() => {
        this.busy.delete(key);
        if (this.dirty.delete(key)) this.sync(ns, name);
      });
  }

  private async write(ns: string, name: string): Promise<void> {
    const pdb = this.pdbs.get(ns)?.get(name);
    if (!pdb) return;
    const now = Date.now();
    const { status, recheckAt } = computeStatus(pdb, this.pods.get(ns)?.values() ?? [], now);
    if (recheckAt !== undefined) setTimeout(() => this.sync(ns, name), recheckAt - now + 10).unref();
    if (same(status, pdb.status ?? {})) return;
    const body = { ...pdb, status };
    await this.pool.submit({
      op: 'update',
      type: { ...PDBS, subresource: 'status' },
      enc: JSON_ENC,
      dryRun: false,
      namespace: ns,
      name,
      fieldManager: 'disruption-controller',
      body: { text: JSON.stringify(body), contentType: 'json' },
    });
  }
}

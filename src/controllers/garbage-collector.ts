/**
 * The garbage collector (front thread): keeps an index of ownerReferences from the change
 * events (the actors attach uid, owners and finalizers, so nothing is parsed here) and
 * - deletes dependents whose owners are all gone (background propagation),
 * - for an owner deleting with the `orphan` finalizer, removes its references from the
 *   dependents, then the finalizer,
 * - for an owner deleting with `foregroundDeletion`, deletes the dependents (foreground too)
 *   and removes the finalizer once no blocking dependent remains.
 */
import { bodyText } from '../actors/pack.js';
import type { ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { ActorPool } from '../actors/pool.js';
import type { KubeObject, Stored } from '../api/object.js';
import type { Registry } from '../registry/registry.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../registry/deletion.js';
import { typeKeyOf } from '../actors/routing.js';

interface Node {
  typeKey: string;
  namespace: string;
  name: string;
  uid: string;
  owners: NonNullable<ChangeEvent['owners']>;
  deleting: boolean;
}

/** Where a live object is, and what checkOwner reads of it. */
interface Alive {
  typeKey: string;
  namespace: string;
  name: string;
  finalizers?: string[];
  deleting?: boolean;
}

/** Every live object not being deleted: checkOwner has nothing to do for it. */
const PLAIN: Alive = Object.freeze({ typeKey: '', namespace: '', name: '' });

/** An object without ownerReferences: nothing to index. */
const NO_OWNERS: Node['owners'] = Object.freeze([]) as unknown as Node['owners'];

const JSON_ENC = { format: 'json' as const, pretty: false };

export class GarbageCollector {
  /**
   * every live object's uid -> where it is, for an owner the collector may act on (one being
   * deleted); any other object maps to PLAIN (shared, nothing allocated): its existence is all
   * a dependent's check reads
   */
  private readonly alive = new Map<string, Alive>();
  /** owner uid -> dependents by uid */
  private readonly dependents = new Map<string, Map<string, Node>>();
  private ready = false;
  private readonly busy = new Set<string>();
  /** the last indexed state of each dependent, to unindex references it dropped */
  private readonly nodes = new Map<string, Node>();

  constructor(
    private readonly pool: ActorPool,
    private readonly registry: Registry,
  ) {}

  /** Builds the index from a full listing of every type, then starts acting. */
  async start(): Promise<void> {
    const seen = new Set<string>();
    for (const d of this.registry.allEnabled()) {
      const typeKey = typeKeyOf(d.group, d.resource);
      if (seen.has(typeKey) || !d.verbs.includes('list')) continue;
      seen.add(typeKey);
      const r = await this.pool.submit({
        op: 'list',
        type: { group: d.group, version: d.version, resource: d.resource },
        enc: JSON_ENC,
        namespace: '',
        opts: {},
      });
      if (!('code' in r)) continue;
      for (const o of JSON.parse(bodyText(r.body)).items ?? []) {
        const m = o.metadata;
        this.track(
          {
            typeKey,
            namespace: m.namespace ?? '',
            name: m.name,
            uid: m.uid,
            owners: m.ownerReferences ?? [],
            deleting: !!m.deletionTimestamp,
          },
          m.finalizers,
        );
      }
    }
    this.ready = true;
    for (const node of this.allDependents()) this.checkDependent(node);
    for (const [uid, o] of this.alive) if (o.deleting) this.checkOwner(uid);
  }

  /**
   * Per event: an object without ownerReferences and not being deleted costs one `alive` entry
   * (the shared PLAIN) and, when it may never have been indexed as a dependent (ADDED, or no
   * dependent indexed at all), no other lookup; Nodes and full `alive` records are made for
   * the others only.
   */
  observe(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      const owners = ev.owners?.length ? ev.owners : NO_OWNERS;
      const node = owners === NO_OWNERS || ev.type === 'DELETED' ? undefined : this.nodeOf(ev, owners);
      if (ev.type === 'DELETED') this.forget(ev.uid, owners);
      else if (node) this.track(node, ev.finalizers);
      else this.trackUnowned(ev);
      if (!this.ready) continue;
      if (ev.type === 'DELETED') {
        for (const dep of this.dependents.get(ev.uid)?.values() ?? []) this.checkDependent(dep);
        for (const o of owners) if (this.alive.get(o.uid)?.deleting) this.checkOwner(o.uid);
      } else {
        if (node) this.checkDependent(node);
        if (ev.deleting) this.checkOwner(ev.uid);
      }
    }
  }

  private nodeOf(ev: ChangeEvent, owners: Node['owners']): Node {
    return {
      typeKey: ev.typeKey,
      namespace: ev.namespace,
      name: ev.name,
      uid: ev.uid,
      owners,
      deleting: !!ev.deleting,
    };
  }

  /** An object without ownerReferences: unindexed if it was a dependent before, and alive. */
  private trackUnowned(ev: ChangeEvent): void {
    // a new object was never indexed; a modified one may have dropped its references
    if (ev.type !== 'ADDED' && this.nodes.size) {
      const prev = this.nodes.get(ev.uid);
      if (prev) this.unindex(prev);
    }
    this.alive.set(ev.uid, this.aliveOf(ev.typeKey, ev.namespace, ev.name, ev.finalizers, !!ev.deleting));
  }

  private aliveOf(
    typeKey: string,
    namespace: string,
    name: string,
    finalizers: string[] | undefined,
    deleting: boolean,
  ): Alive {
    // checkOwner acts only on an owner being deleted (then with its finalizers)
    return deleting ? { typeKey, namespace, name, finalizers, deleting } : PLAIN;
  }

  private track(node: Node, finalizers: string[] | undefined): void {
    const prev = this.nodes.get(node.uid);
    if (prev) for (const o of prev.owners) this.dependents.get(o.uid)?.delete(node.uid);
    if (node.owners.length) this.nodes.set(node.uid, node);
    else this.nodes.delete(node.uid);
    this.alive.set(node.uid, this.aliveOf(node.typeKey, node.namespace, node.name, finalizers, node.deleting));
    for (const o of node.owners) {
      let m = this.dependents.get(o.uid);
      if (!m) this.dependents.set(o.uid, (m = new Map()));
      m.set(node.uid, node);
    }
  }

  /** A dependent that no longer has ownerReferences leaves the index. */
  private unindex(prev: Node): void {
    for (const o of prev.owners) this.dependents.get(o.uid)?.delete(prev.uid);
    this.nodes.delete(prev.uid);
  }

  private forget(uid: string, owners: Node['owners']): void {
    this.alive.delete(uid);
    this.nodes.delete(uid);
    for (const o of owners) this.dependents.get(o.uid)?.delete(uid);
  }

  private allDependents(): Iterable<Node> {
    return this.nodes.values();
  }

  /** A dependent whose owners are all gone is deleted; one with some owners left loses the dangling references. */
  private checkDependent(node: Node): void {
    if (!this.alive.has(node.uid) || node.deleting) return;
    const gone = node.owners.filter((o) => !this.alive.has(o.uid));
    if (gone.length === 0) return;
    if (gone.length === node.owners.length) this.run(`del:${node.uid}`, () => this.remove(node, 'Background'));
    else this.run(`ref:${node.uid}`, () => this.dropRefs(node, new Set(gone.map((o) => o.uid))));
  }

  /** An owner being deleted with a policy finalizer: orphan or delete its dependents, then release it. */
  private checkOwner(uid: string): void {
    const owner = this.alive.get(uid);
    if (!owner?.deleting) return;
    const deps = [...(this.dependents.get(uid)?.values() ?? [])];
    if (owner.finalizers?.includes(ORPHAN_FINALIZER)) {
      this.run(`orphan:${uid}`, async () => {
        for (const d of deps) await this.dropRefs(d, new Set([uid]));
        await this.removeFinalizer(owner, ORPHAN_FINALIZER);
      });
    } else if (owner.finalizers?.includes(FOREGROUND_FINALIZER)) {
      const blocking = deps.filter((d) => d.owners.some((o) => o.uid === uid && o.blockOwnerDeletion));
      for (const d of deps) if (!d.deleting) this.run(`del:${d.uid}`, () => this.remove(d, 'Foreground'));
      if (blocking.length === 0) this.run(`fg:${uid}`, () => this.removeFinalizer(owner, FOREGROUND_FINALIZER));
    }
  }

  /** Runs one piece of work per key at a time; failures are retried on the next event. */
  private run(key: string, work: () => Promise<void>): void {
    if (this.busy.has(key)) return;
    this.busy.add(key);
    work()
      .catch(() => undefined)
      .finally(() => this.busy.delete(key));
  }

  private typeRef(typeKey: string): TypeRef | undefined {
    const [group, resource] = typeKey.split('/') as [string, string];
    const d = this.registry.allEnabled().find((x) => x.group === group && x.resource === resource);
    return d ? { group, version: d.version, resource } : undefined;
  }

  private async remove(
    node: { typeKey: string; namespace: string; name: string; uid: string },
    propagationPolicy: string,
  ): Promise<void> {
    const type = this.typeRef(node.typeKey);
    if (!type) return;
    await this.pool.submit({
      op: 'delete',
      type,
      enc: JSON_ENC,
      dryRun: false,
      namespace: node.namespace,
      name: node.name,
      options: { propagationPolicy, preconditions: { uid: node.uid } },
    });
  }

  /** Read-modify-write with the resourceVersion precondition, retried on conflict. */
  private async modify(
    node: { typeKey: string; namespace: string; name: string },
    change: (obj: Stored<KubeObject>) => boolean,
  ): Promise<void> {
    const type = this.typeRef(node.typeKey);
    if (!type) return;
    for (let attempt = 0; attempt < 5; attempt++) {
      const g = await this.pool.submit({ op: 'get', type, enc: JSON_ENC, namespace: node.namespace, name: node.name });
      if (!('code' in g)) return;
      const obj = JSON.parse(bodyText(g.body));
      if (!change(obj)) return;
      const u = await this.pool.submit({
        op: 'update',
        type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: node.namespace,
        name: node.name,
        fieldManager: 'garbage-collector',
        body: { text: JSON.stringify(obj), contentType: 'json' },
      });
      if (!('error' in u) || u.error.code !== 409) return;
    }
  }

  private dropRefs(node: Node, uids: Set<string>): Promise<void> {
    return this.modify(node, (obj) => {
      const refs = obj.metadata.ownerReferences ?? [];
      const kept = refs.filter((r) => !uids.has(r.uid));
      if (kept.length === refs.length) return false;
      if (kept.length) obj.metadata.ownerReferences = kept;
      else delete obj.metadata.ownerReferences;
      return true;
    });
  }

  private removeFinalizer(
    owner: { typeKey: string; namespace: string; name: string },
    finalizer: string,
  ): Promise<void> {
    return this.modify(owner, (obj) => {
      const f = obj.metadata.finalizers ?? [];
      if (!f.includes(finalizer)) return false;
      obj.metadata.finalizers = f.filter((x: string) => x !== finalizer);
      return true;
    });
  }
}

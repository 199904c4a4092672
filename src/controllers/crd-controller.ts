/**
 * The CRD controller (front thread): upstream's naming, establishing and finalizing
 * controllers of apiextensions-apiserver, fed by the change events of
 * customresourcedefinitions.
 * - Names: a CRD's names are accepted unless another CRD of the same group already holds its
 *   plural, singular, a short name or its kind; status.acceptedNames and the NamesAccepted
 *   condition record the outcome; Established follows once the names are accepted.
 * - Serving: the served custom types (CRDs with accepted names) go to every shard actor
 *   (`ActorPool.setDefs`) and then to the front thread's registry, before the Established
 *   condition is written, so a client that sees Established can use the resource.
 * - Deleting: a CRD marked for deletion (held by the cleanup finalizer its delete added) has
 *   its custom resources deleted; once none is left the finalizer goes and the CRD with it.
 * Writes go through the status subresource with the read resourceVersion; a conflict is
 * retried on the next change.
 */
import type { CrdNames, CrdStatus, CustomResourceDefinition } from '../api/kinds.js';
import type { Condition, Stored } from '../api/object.js';
import { bodyText } from '../actors/pack.js';
import type { CachedObject, ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import type { ActorPool } from '../actors/pool.js';
import type { Registry } from '../registry/registry.js';
import { groupFor } from '../api/identity.js';
import { approvalCondition } from '../registry/crd/api-approval.js';
import { structuralViolations } from '../registry/crd/crd-validation.js';
import { customTypeOf, type CustomType } from '../registry/crd/types.js';
import { registerColumns } from '../registry/crd/columns.js';
import { cleanupFinalizer } from '../registry/strategies/crds.js';
import { rfc3339 } from '../registry/objects.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
/** how soon a CRD whose custom resources are still being deleted is looked at again */
const CLEANUP_RETRY_MS = 500;

/** a stored CRD (validated on write: names and group have their types) */
type Crd = Stored<CustomResourceDefinition>;

interface Accepted {
  names: CrdNames | undefined;
  condition: { status: string; reason: string; message: string };
}

function condition(
  conds: Condition[],
  type: string,
  want: { status: string; reason: string; message: string },
  now: string,
): Condition[] {
  const prev = conds.find((c) => c?.type === type);
  const lastTransitionTime = prev && prev.status === want.status ? prev.lastTransitionTime : now;
  const next = { type, ...want, lastTransitionTime };
  const out = conds.filter((c) => c?.type !== type);
  out.push({ type, status: next.status, lastTransitionTime, reason: next.reason, message: next.message });
  return out;
}

/**
 * Upstream's nonstructuralschema controller: NonStructuralSchema True (Violations, the findings
 * as one aggregate message) for a CRD whose schema is not structural (only one persisted
 * before v1 required it can be), and no such condition otherwise.
 */
function nonStructural(conds: Condition[], crd: unknown, now: string): Condition[] {
  const found = structuralViolations(crd);
  if (!found.length) return conds.filter((c) => c?.type !== 'NonStructuralSchema');
  return condition(
    conds,
    'NonStructuralSchema',
    { status: 'True', reason: 'Violations', message: found.length === 1 ? found[0]! : `[${found.join(', ')}]` },
    now,
  );
}

export class CrdController implements Informer {
  private readonly crds = new Map<string, Crd>();
  readonly typeRef: TypeRef;
  private readonly typeKey: string;
  private served = '';
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  /**
   * loaded: objects the actors loaded for newly served types (the read cache);
   * removed: type keys no longer served (their watches end)
   */
  constructor(
    private readonly pool: ActorPool,
    private readonly registry: Registry,
    private readonly loaded: (objs: CachedObject[]) => void,
    private readonly removed: (typeKeys: string[]) => void = () => {},
  ) {
    const group = groupFor(registry.identity, 'apiextensions.plat.io');
    this.typeRef = { group, version: 'v1', resource: 'customresourcedefinitions' };
    this.typeKey = `${group}/customresourcedefinitions`;
  }

  /** The stored CRDs at start; `sync()` then serves their types before the server listens. */
  load(objects: readonly CachedObject[]): void {
    for (const o of objects) if (o.typeKey === this.typeKey) this.crds.set(o.name, JSON.parse(o.json));
  }

  observe(evs: readonly ChangeEvent[]): void {
    let changed = false;
    for (const ev of evs) {
      if (ev.typeKey !== this.typeKey) continue;
      changed = true;
      if (ev.type === 'DELETED') this.crds.delete(ev.name);
      else this.crds.set(ev.name, JSON.parse(ev.json));
    }
    if (changed) void this.sync();
  }

  /** Reconciles every CRD; runs one at a time (a change during a run triggers one more). */
  sync(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.reconcile();
        } while (this.again && !this.stopped);
      } catch (e) {
        process.stderr.write(`crd controller: ${(e as Error).message}\n`);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Whether the CRD serving group/resource is being deleted (its resources refuse creates). */
  terminating(group: string, resource: string): boolean {
    for (const crd of this.crds.values()) {
      if (crd.spec?.group === group && crd.status?.acceptedNames?.plural === resource)
        return !!crd.metadata.deletionTimestamp;
    }
    return false;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Upstream NamingConditionController: names taken by another CRD of the group (oldest first) conflict. */
  private accept(crd: Crd, all: Crd[]): Accepted {
    const n: CrdNames = crd.spec?.names ?? {};
    const group = crd.spec?.group;
    // validation refuses these; one stored before that rule is never served
    if (group !== undefined && this.registry.isBuiltinGroup(group)) {
      return {
        names: undefined,
        condition: {
          status: 'False',
          reason: 'GroupConflict',
          message: `group ${JSON.stringify(group)} is served by the API server itself`,
        },
      };
    }
    const mine = crd.metadata.name;
    const others = all.filter(
      (o) => o.metadata.name !== mine && o.spec?.group === group && o.status?.acceptedNames?.plural,
    );
    // others: acceptedNames.plural set (the filter above)
    const taken = (pick: (names: CrdNames) => (string | undefined)[]) =>
      new Set(others.flatMap((o) => pick(o.status!.acceptedNames!)).filter((s): s is string => !!s));
    const plurals = taken((a) => [a.plural, a.singular, ...(a.shortNames ?? [])]);
    const kinds = taken((a) => [a.kind, a.listKind]);
    if (n.plural !== undefined && plurals.has(n.plural))
      return {
        names: crd.status?.acceptedNames,
        condition: { status: 'False', reason: 'PluralConflict', message: `"${n.plural}" is already in use` },
      };
    if (n.singular && plurals.has(n.singular))
      return {
        names: crd.status?.acceptedNames,
        condition: { status: 'False', reason: 'SingularConflict', message: `"${n.singular}" is already in use` },
      };
    const short = (n.shortNames ?? []).find((s: string) => plurals.has(s));
    if (short)
      return {
        names: crd.status?.acceptedNames,
        condition: { status: 'False', reason: 'ShortNamesConflict', message: `"${short}" is already in use` },
      };
    if (n.kind !== undefined && kinds.has(n.kind))
      return {
        names: crd.status?.acceptedNames,
        condition: { status: 'False', reason: 'KindConflict', message: `"${n.kind}" is already in use` },
      };
    if (n.listKind && kinds.has(n.listKind))
      return {
        names: crd.status?.acceptedNames,
        condition: { status: 'False', reason: 'ListKindConflict', message: `"${n.listKind}" is already in use` },
      };
    return { names: n, condition: { status: 'True', reason: 'NoConflicts', message: 'no conflicts found' } };
  }

  private async reconcile(): Promise<void> {
    const now = rfc3339(Date.now());
    const all = [...this.crds.values()].sort((a, b) =>
      (a.metadata.creationTimestamp ?? '') < (b.metadata.creationTimestamp ?? '') ? -1 : 1,
    );
    const desired = new Map<string, Crd>();
    for (const crd of all) {
      const a = this.accept(crd, all);
      const status: CrdStatus = { ...(crd.status ?? {}) };
      if (a.names) status.acceptedNames = a.names;
      let conds: Condition[] = Array.isArray(status.conditions) ? status.conditions : [];
      conds = condition(conds, 'NamesAccepted', a.condition, now);
      if (a.condition.status === 'True')
        conds = condition(
          conds,
          'Established',
          { status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
          now,
        );
      const approval = approvalCondition(crd);
      if (approval) conds = condition(conds, 'KubernetesAPIApprovalPolicyConformant', approval, now);
      conds = nonStructural(conds, crd, now);
      status.conditions = conds;
      desired.set(crd.metadata.name, { ...crd, status });
    }
    const types = [...desired.values()]
      .map(customTypeOf)
      .filter((t): t is CustomType => t !== undefined && !this.registry.isBuiltinGroup(t.group))
      .sort((a, b) => (a.crd < b.crd ? -1 : 1));
    const key = JSON.stringify(types);
    if (key !== this.served) {
      const previous = this.registry.customTypes();
      this.loaded(await this.pool.setDefs(types));
      this.registry.setCustom(types);
      registerColumns(types, previous);
      this.served = key;
      const now = new Set(types.map((t) => `${t.group}/${t.plural}`));
      const gone = previous.map((t) => `${t.group}/${t.plural}`).filter((k) => !now.has(k));
      if (gone.length) this.removed(gone);
    }
    for (const crd of all) {
      const want = desired.get(crd.metadata.name)!;
      if (JSON.stringify(want.status) !== JSON.stringify(crd.status ?? {})) await this.writeStatus(want);
      if (crd.metadata.deletionTimestamp)
        await this.finalize(
          crd,
          types.find((t) => t.crd === crd.metadata.name),
        );
    }
  }

  private async writeStatus(crd: Crd): Promise<void> {
    const r = await this.pool.submit({
      op: 'update',
      type: { ...this.typeRef, subresource: 'status' },
      namespace: '',
      name: crd.metadata.name,
      body: { text: JSON.stringify(crd), contentType: 'json' },
      dryRun: false,
      enc: JSON_ENC,
    });
    if ('error' in r && r.error.code !== 409 && r.error.code !== 404)
      process.stderr.write(`crd controller: status of ${crd.metadata.name}: ${r.error.message}\n`);
  }

  /** Deletes the custom resources of a deleting CRD; removes its cleanup finalizer once none is left. */
  private async finalize(crd: Crd, t: CustomType | undefined): Promise<void> {
    const finalizer = cleanupFinalizer(crd.apiVersion ?? '');
    const finalizers: string[] = crd.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    if (t) {
      const type: TypeRef = { group: t.group, version: t.storageVersion, resource: t.plural };
      await this.pool.submit({
        op: 'deletecollection',
        type,
        namespace: '',
        opts: {},
        options: {},
        dryRun: false,
        enc: JSON_ENC,
      });
      const r = await this.pool.submit({ op: 'list', type, namespace: '', opts: { limit: 1 }, enc: JSON_ENC });
      const left = 'code' in r ? (JSON.parse(bodyText(r.body)).items ?? []).length : 1;
      if (left > 0) {
        // instances held by their own finalizers: look again shortly
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          void this.sync();
        }, CLEANUP_RETRY_MS);
        return;
      }
    }
    const next = { ...crd, metadata: { ...crd.metadata, finalizers: finalizers.filter((f) => f !== finalizer) } };
    const r = await this.pool.submit({
      op: 'update',
      type: this.typeRef,
      namespace: '',
      name: crd.metadata.name,
      body: { text: JSON.stringify(next), contentType: 'json' },
      dryRun: false,
      enc: JSON_ENC,
    });
    if ('error' in r && r.error.code !== 409 && r.error.code !== 404)
      process.stderr.write(`crd controller: finalizing ${crd.metadata.name}: ${r.error.message}\n`);
  }
}

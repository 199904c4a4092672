/**
 * apiextensions.plat.io/v1 CustomResourceDefinitions: v1 defaults, validation
 * (crd/crd-validation.ts), status reset on create with the storage version stored, and the
 * cleanup finalizer a delete adds (the CRD controller removes it once every custom resource
 * is gone, see src/controllers/crd-controller.ts).
 */
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { requiresStructural, validateCRD, validateCRDUpdate } from '../crd/crd-validation.js';
import { crdGroupCauses } from '../crd/crd-groups.js';

export const CRD_CLEANUP_FINALIZER_WORD = 'customresourcecleanup';

/** `customresourcecleanup.apiextensions.<domain>`: the domain is the CRD's own group's. */
export function cleanupFinalizer(apiVersion: string): string {
  const group = apiVersion.split('/')[0] ?? '';
  return `${CRD_CLEANUP_FINALIZER_WORD}.${group}`;
}

function defaults(crd: any): void {
  const spec = crd.spec;
  if (!spec || typeof spec !== 'object') return;
  const n = spec.names;
  if (n && typeof n === 'object' && typeof n.kind === 'string') {
    if (!n.singular) n.singular = n.kind.toLowerCase();
    if (!n.listKind) n.listKind = `${n.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  if (Array.isArray(spec.versions)) for (const v of spec.versions) if (v && typeof v === 'object') v.served ??= false;
}

function storageVersion(crd: any): string | undefined {
  return (Array.isArray(crd.spec?.versions) ? crd.spec.versions : []).find((v: any) => v?.storage === true)?.name;
}

export const crdStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    defaults(obj);
    const sv = storageVersion(obj);
    obj.status = { acceptedNames: { plural: '', kind: '' }, ...(sv ? { storedVersions: [sv] } : {}) };
  },
  prepareForUpdate(obj, old) {
    defaults(obj);
    const sv = storageVersion(obj);
    const stored: string[] = [...(old.status?.storedVersions ?? [])];
    if (sv && !stored.includes(sv)) obj.status = { ...(obj.status ?? {}), storedVersions: [...stored, sv] };
  },
  // a built-in group is refused (src/registry/crd/crd-groups.ts); the approval policy of protected
  // groups holds on create and on an update that changes the annotation (api-approval.ts)
  validate: (obj, config, old) => [
    ...validateCRD(obj, requiresStructural(old)),
    ...crdGroupCauses(obj, config?.apiDomain, old),
  ],
  validateUpdate: (obj, old) => validateCRDUpdate(obj, old),
  validateSubresourceUpdate: (_name, next, old) => validateCRD(next, requiresStructural(old)),
  /** the first delete is always held: the cleanup finalizer goes on (prepareForDelete) */
  holdsDeletion: (obj) => !obj.metadata?.deletionTimestamp,
  prepareForDelete(obj) {
    const f = cleanupFinalizer(obj.apiVersion);
    const finalizers: string[] = obj.metadata.finalizers ?? [];
    if (!finalizers.includes(f)) obj.metadata.finalizers = [...finalizers, f];
    const conditions = (obj.status?.conditions ?? []).filter((c: any) => c?.type !== 'Terminating');
    conditions.push({
      type: 'Terminating',
      status: 'True',
      lastTransitionTime: obj.metadata.deletionTimestamp,
      reason: 'InstanceDeletionPending',
      message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    });
    obj.status = { ...(obj.status ?? {}), conditions };
  },
};

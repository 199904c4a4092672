/**
 * apiextensions.plat.io/v1 CustomResourceDefinitions: v1 defaults, validation
 * (crd/crd-validation.ts), status reset on create with the storage version stored, and the
 * cleanup finalizer a delete adds (the CRD controller removes it once every custom resource
 * is gone, see src/controllers/crd-controller.ts).
 */
import type { CustomResourceDefinition } from '../../api/kinds.js';
import { fieldAt, isRecord } from '../../api/object.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { requiresStructural, validateCRD, validateCRDUpdate } from '../crd/crd-validation.js';
import { crdGroupCauses } from '../crd/crd-groups.js';

export const CRD_CLEANUP_FINALIZER_WORD = 'customresourcecleanup';

/** `customresourcecleanup.apiextensions.<domain>`: the domain is the CRD's own group's. */
export function cleanupFinalizer(apiVersion: string): string {
  const group = apiVersion.split('/')[0] ?? '';
  return `${CRD_CLEANUP_FINALIZER_WORD}.${group}`;
}

function defaults(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!spec || typeof spec !== 'object') return;
  const n = spec.names;
  if (isRecord(n) && typeof n.kind === 'string') {
    if (!n.singular) n.singular = n.kind.toLowerCase();
    if (!n.listKind) n.listKind = `${n.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  if (Array.isArray(spec.versions)) for (const v of spec.versions) if (isRecord(v)) v.served ??= false;
}

/** the name of the storage version (validation, which runs next, rejects anything but one string) */
function storageVersion(crd: CustomResourceDefinition): string | undefined {
  const versions = crd.spec?.versions;
  const v: unknown = (Array.isArray(versions) ? versions : []).find((v: unknown) => fieldAt(v, 'storage') === true);
  const name = fieldAt(v, 'name');
  return typeof name === 'string' ? name : undefined;
}

export const crdStrategy: ResourceStrategy<CustomResourceDefinition> = {
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
    const f = cleanupFinalizer(obj.apiVersion ?? '');
    const finalizers: string[] = obj.metadata.finalizers ?? [];
    if (!finalizers.includes(f)) obj.metadata.finalizers = [...finalizers, f];
    const conditions = (obj.status?.conditions ?? []).filter((c) => c?.type !== 'Terminating');
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

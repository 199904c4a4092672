import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';

/** The namespaces that always exist; deleting them is forbidden. */
export const SYSTEM_NAMESPACES = new Set(['default', 'plat-system', 'plat-public', 'plat-node-lease']);
export const NAMESPACE_FINALIZER = 'platform';

/**
 * Namespaces: DNS labels, the spec finalizer and phase Active set by the server; deletion
 * turns them Terminating until the namespace controller empties them and finalizes.
 */
export const namespaceStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  nameRule: 'label',
  returnDeletedObject: true,
  prepareForCreate(obj) {
    obj.spec = { finalizers: [NAMESPACE_FINALIZER] };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'platform.io/metadata.name': obj.metadata.name };
  },
  prepareForUpdate(obj, old) {
    obj.spec = old.spec;
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'platform.io/metadata.name': obj.metadata.name };
  },
  holdsDeletion(obj) {
    return (obj.spec?.finalizers?.length ?? 0) > 0;
  },
  prepareForDelete(obj) {
    obj.status = { ...(obj.status ?? {}), phase: 'Terminating' };
  },
  forbidDelete(obj) {
    return SYSTEM_NAMESPACES.has(obj.metadata.name) ? 'this namespace may not be deleted' : undefined;
  },
  updateSubresource(name, obj, old) {
    if (name !== 'finalize') return undefined;
    const next = structuredClone(old);
    next.spec = { ...(next.spec ?? {}), finalizers: Array.isArray(obj.spec?.finalizers) ? obj.spec.finalizers : [] };
    return next;
  },
};

import type { Namespace } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';

/** The label carrying a namespace's name, in the server's label domain (`kubernetes.io/metadata.name` upstream). */
const nameLabel = (labelDomain: string): string => `${labelDomain}/metadata.name`;

/**
 * Namespaces: DNS labels, the spec finalizer (the product word: `kubernetes` upstream, the
 * server's API Service name) and phase Active set by the server; deletion
 * turns them Terminating until the namespace controller empties them and finalizes. The
 * namespaces the server keeps (default and the identity's system ones) may not be deleted.
 */
export const namespaceStrategy: ResourceStrategy<Namespace> = {
  ...DEFAULT_STRATEGY,
  nameRule: 'label',
  returnDeletedObject: true,
  prepareForCreate(obj, ctx) {
    obj.spec = { finalizers: [ctx.config.apiServiceName] };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [nameLabel(ctx.config.labelDomain)]: obj.metadata.name };
  },
  prepareForUpdate(obj, old, ctx) {
    obj.spec = old.spec;
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [nameLabel(ctx.config.labelDomain)]: obj.metadata.name };
  },
  holdsDeletion(obj) {
    return (obj.spec?.finalizers?.length ?? 0) > 0;
  },
  prepareForDelete(obj) {
    obj.status = { ...(obj.status ?? {}), phase: 'Terminating' };
  },
  forbidDelete(obj, config) {
    return config.protectedNamespaces.includes(obj.metadata.name) ? 'this namespace may not be deleted' : undefined;
  },
  updateSubresource(name, obj, old) {
    if (name !== 'finalize') return undefined;
    const next = structuredClone(old);
    next.spec = { ...(next.spec ?? {}), finalizers: Array.isArray(obj.spec?.finalizers) ? obj.spec.finalizers : [] };
    return next;
  },
};

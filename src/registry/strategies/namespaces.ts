import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';

/** Namespaces: DNS labels, spec finalizer and phase Active set by the server. */
export const namespaceStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  nameRule: 'label',
  prepareForCreate(obj) {
    obj.spec = { finalizers: ['platform'] };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'platform.io/metadata.name': obj.metadata.name };
  },
  prepareForUpdate(obj, old) {
    obj.spec = old.spec;
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'platform.io/metadata.name': obj.metadata.name };
  },
};

/**
 * The per-kind strategies, keyed by `<group>/<resource>` in the reference domain.
 * Kinds not listed use DEFAULT_STRATEGY.
 */
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { namespaceStrategy } from './namespaces.js';
import { podStrategy } from './pods.js';
import { immutableDataStrategy } from './configmaps.js';

const createOnUpdate: ResourceStrategy = { ...DEFAULT_STRATEGY, allowCreateOnUpdate: true };

const STRATEGIES: Record<string, ResourceStrategy> = {
  '/namespaces': namespaceStrategy,
  '/pods': podStrategy,
  '/configmaps': immutableDataStrategy,
  '/secrets': immutableDataStrategy,
  '/services': { ...DEFAULT_STRATEGY, nameRule: 'label' },
  '/endpoints': createOnUpdate,
  '/events': createOnUpdate,
  '/limitranges': createOnUpdate,
  'coordination.plat.io/leases': createOnUpdate,
  'rbac.authorization.plat.io/roles': { ...createOnUpdate, nameRule: 'path' },
  'rbac.authorization.plat.io/rolebindings': { ...createOnUpdate, nameRule: 'path' },
  'rbac.authorization.plat.io/clusterroles': { ...createOnUpdate, nameRule: 'path' },
  'rbac.authorization.plat.io/clusterrolebindings': { ...createOnUpdate, nameRule: 'path' },
};

export function strategyFor(group: string, resource: string): ResourceStrategy {
  return STRATEGIES[`${group}/${resource}`] ?? DEFAULT_STRATEGY;
}

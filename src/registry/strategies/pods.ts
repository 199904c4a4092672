import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { qosClass, validatePodSpec } from './pod-spec.js';
import { defaultPodOnly, defaultPodSpec } from './pod-defaults.js';
import { validatePodUpdate } from './pod-update.js';
import { bindPod, connectPod } from './pod-connect.js';

/** Upstream SetDefaults_Pod on top of the pod spec defaults; runs on create and update. */
function defaultPod(obj: any): void {
  const spec = (obj.spec ??= {});
  defaultPodSpec(spec);
  defaultPodOnly(spec);
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  spec.priority ??= 0;
}

/**
 * Pods: defaults, PodSpec validation, the narrow set of spec changes allowed after creation,
 * `binding` (POST) and the node-agent subresources (answered at once, never hanging).
 */
export const podStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  returnDeletedObject: true,
  /** upstream: a pod never bound to a node, or already finished, goes at once */
  gracePeriod(obj, requested) {
    if (!obj.spec?.nodeName || ['Succeeded', 'Failed'].includes(obj.status?.phase)) return 0;
    return requested ?? obj.spec?.terminationGracePeriodSeconds ?? 30;
  },
  prepareForCreate(obj) {
    defaultPod(obj);
    obj.status = { phase: 'Pending', qosClass: qosClass(obj.spec) };
  },
  prepareForUpdate(obj) {
    defaultPod(obj);
  },
  validate(obj) {
    return validatePodSpec(obj.spec, 'spec');
  },
  validateUpdate: validatePodUpdate,
  createSubresource(name, body, old, ctx) {
    if (name === 'binding') return bindPod(body, old, ctx.now);
    connectPod(name, old);
    return undefined;
  },
  getSubresource: connectPod,
};

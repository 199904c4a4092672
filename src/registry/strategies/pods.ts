import type { KubeObject } from '../../api/object.js';
import type { Binding, Pod } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { asArray, qosClass, validatePodSpec } from './pod-spec.js';
import { forbidden } from './field-errors.js';
import { errors } from '../../api/status.js';
import { defaultPodOnly, defaultPodSpec } from './pod-defaults.js';
import { validatePodUpdate } from './pod-update.js';
import { bindPod, connectPod } from './pod-connect.js';
import {
  ephemeralContainersUpdate,
  resizeUpdate,
  validateEphemeralContainers,
  validateEphemeralContainersUpdate,
  validateResize,
} from './pod-ephemeral.js';

/** Upstream SetDefaults_Pod on top of the pod spec defaults; runs on create and update. */
function defaultPod(obj: KubeObject<Record<string, unknown>>): void {
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
export const podStrategy: ResourceStrategy<Pod> = {
  ...DEFAULT_STRATEGY,
  returnDeletedObject: true,
  /** upstream: a pod never bound to a node, or already finished, goes at once */
  gracePeriod(obj, requested) {
    const phase = obj.status?.phase;
    if (!obj.spec?.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    return requested ?? obj.spec?.terminationGracePeriodSeconds ?? 30;
  },
  prepareForCreate(obj) {
    // upstream ValidatePodCreate: ephemeral containers come only through pods/ephemeralcontainers
    if (asArray(obj.spec?.ephemeralContainers).length > 0) {
      throw errors.invalid({ kind: 'Pod', name: obj.metadata?.name }, [
        forbidden('spec.ephemeralContainers', 'cannot be set on create'),
      ]);
    }
    defaultPod(obj);
    obj.status = { phase: 'Pending', qosClass: qosClass(obj.spec) };
  },
  prepareForUpdate(obj) {
    defaultPod(obj);
  },
  validate(obj) {
    return [...validatePodSpec(obj.spec, 'spec'), ...validateEphemeralContainers(obj.spec, 'spec.ephemeralContainers')];
  },
  validateUpdate: validatePodUpdate,
  /** pods/ephemeralcontainers, and pods/resize (served only with InPlacePodVerticalScaling) */
  updateSubresource(name, obj, old) {
    if (name === 'ephemeralcontainers') return ephemeralContainersUpdate(obj, old);
    if (name === 'resize') return resizeUpdate(obj, old);
    return undefined;
  },
  validateSubresourceUpdate(name, next, old) {
    if (name === 'ephemeralcontainers') return validateEphemeralContainersUpdate(next, old);
    if (name === 'resize') return validateResize(next, old);
    return [];
  },
  createSubresource(name, body, old, ctx) {
    // the body is a decoded JSON object; bindPod validates each field it reads
    if (name === 'binding') return bindPod(body as Binding, old, ctx.now);
    connectPod(name, old);
    return undefined;
  },
  getSubresource: connectPod,
};

/**
 * Deployments, ReplicaSets, StatefulSets, DaemonSets and ReplicationControllers: a required,
 * valid selector that selects the pod template's labels, a valid template, and the selector
 * fixed after creation (a StatefulSet's whole spec apart from the fields upstream lists).
 */
import type { KubeObject } from '../../api/object.js';
import type { PodTemplateSpec, ReplicationController, Workload } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { forbidden, immutable, invalid, notSupported, required, same, type Cause } from './field-errors.js';
import { labelValue, labelKey, selectorMatchesTemplate, validateLabelSelector } from './label-selector.js';
import { validatePodSpec } from './pod-spec.js';
import { validatedOrUndefined } from '../validated.js';
import {
  defaultDaemonSet,
  defaultDeployment,
  defaultReplicaSet,
  defaultReplicationController,
  defaultStatefulSet,
} from './workload-defaults.js';

/**
 * ValidatePodTemplateSpec: template labels and annotations' keys, then the pod spec. previous:
 * the template of a validated object this one replaces: labels it shares passed then, and
 * validatePodSpec skips what its containers share.
 */
export function validateTemplate(
  template: PodTemplateSpec | undefined,
  path: string,
  previous?: PodTemplateSpec,
): Cause[] {
  if (!template || typeof template !== 'object') return [required(path)];
  const out: Cause[] = [];
  const labels = template.metadata?.labels;
  if (labels === undefined || labels !== previous?.metadata?.labels) {
    for (const [k, v] of Object.entries(labels ?? {})) {
      out.push(...labelKey(`${path}.metadata.labels`, k), ...labelValue(`${path}.metadata.labels`, v));
    }
  }
  out.push(...validatePodSpec(template.spec, `${path}.spec`, previous?.spec));
  return out;
}

/**
 * The shared rules of the replica-managing kinds (upstream ValidateDeploymentSpec and kin).
 * previous: a validated object obj replaces (src/registry/validated.ts); a template it shares
 * by reference passed validateTemplate then (a function of the template alone) and is not
 * checked again, nor the selector's rules when the selector is shared too.
 */
function validateWorkload(obj: Workload, kind: string, previous?: Workload): Cause[] {
  const spec = obj.spec ?? {};
  const out: Cause[] = [];
  if (spec.replicas !== undefined && (!Number.isInteger(spec.replicas) || spec.replicas < 0)) {
    out.push(invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  }
  const sel = spec.selector;
  const prevTemplate = previous?.spec?.template;
  const sharedTemplate = !!spec.template && prevTemplate === spec.template;
  // the selector's rules are a function of the selector and the template's labels alone: both
  // shared with a validated object (a rescale; a new template keeping its labels), they passed
  // then and pass now
  const sharedLabels = sharedTemplate || (!!spec.template && !!prevTemplate && sameLabels(spec.template, prevTemplate));
  if (sel == null || !sharedLabels || previous?.spec?.selector !== sel) {
    if (sel == null) out.push(required('spec.selector'));
    else {
      out.push(...validateLabelSelector(sel, 'spec.selector'));
      if (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length) {
        out.push(invalid('spec.selector', sel, `empty selector is invalid for ${kind}`));
      }
    }
    out.push(...selectorMatchesTemplate(sel, spec.template, 'spec.template'));
  }
  if (!sharedTemplate) out.push(...validateTemplate(spec.template, 'spec.template', previous?.spec?.template));
  const restart = spec.template?.spec?.restartPolicy || 'Always';
  if (spec.template?.spec && restart !== 'Always')
    out.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  return out;
}

/** Both templates hold the same labels node (or neither has labels). */
function sameLabels(a: PodTemplateSpec, b: PodTemplateSpec): boolean {
  return a.metadata?.labels === b.metadata?.labels;
}

/** ReplicationController: a map selector, defaulted from the template's labels. */
function validateRC(obj: ReplicationController): Cause[] {
  const spec = obj.spec ?? {};
  const out: Cause[] = [];
  const sel = spec.selector ?? {};
  if (!Object.keys(sel).length) out.push(required('spec.selector'));
  const labels: Record<string, string> = spec.template?.metadata?.labels ?? {};
  if (spec.template && !Object.entries(sel).every(([k, v]) => labels[k] === v)) {
    out.push(invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  if (spec.template) out.push(...validateTemplate(spec.template, 'spec.template'));
  return out;
}

const STS_MUTABLE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

function validateStatefulSetUpdate(obj: KubeObject, old: KubeObject): Cause[] {
  const strip = (spec: unknown) =>
    Object.fromEntries(Object.entries(spec ?? {}).filter(([k]) => !STS_MUTABLE.includes(k)));
  if (same(strip(obj.spec), strip(old.spec))) return [];
  return [
    forbidden(
      'spec',
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ),
  ];
}

/** kind: the word of upstream's messages; defaults: the kind's defaulting (create and update). */
function workload(kind: string, emptyWord: string, defaults: (obj: KubeObject) => void): ResourceStrategy<Workload> {
  return {
    ...DEFAULT_STRATEGY,
    prepareForCreate: defaults,
    prepareForUpdate: defaults,
    validate: (obj, _config, old) => validateWorkload(obj, emptyWord, validatedOrUndefined(old)),
    validateUpdate: (obj, old) =>
      kind === 'statefulset'
        ? validateStatefulSetUpdate(obj, old)
        : immutable('spec.selector', obj.spec?.selector, old.spec?.selector),
  };
}

export const deploymentStrategy = workload('deployment', 'deployment', defaultDeployment);
export const replicaSetStrategy = workload('replicaset', 'deployment', defaultReplicaSet);
export const statefulSetStrategy = workload('statefulset', 'statefulset', defaultStatefulSet);
export const daemonSetStrategy = workload('daemonset', 'daemonset', defaultDaemonSet);

export const replicationControllerStrategy: ResourceStrategy<ReplicationController> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate: defaultReplicationController,
  prepareForUpdate: defaultReplicationController,
  validate: validateRC,
};

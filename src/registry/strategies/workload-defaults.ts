/**
 * Upstream's defaulting of the workload kinds (apps/v1 and batch/v1 SetDefaults_*), with their
 * pod templates defaulted as a PodSpec. Run on create and on every update (PUT, patch, apply),
 * as upstream defaults every decoded object. Non-pointer Go fields use `||=`, pointer fields `??=`.
 */
import { fieldAt, type KubeObject } from '../../api/object.js';
import { defaultPodTemplate } from './pod-defaults.js';

/** Decoded JSON being defaulted: any field may hold any value until checked. */
type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** obj.spec, created when absent (a non-pointer field upstream); undefined when not an object. */
function specOf(obj: KubeObject): Json | undefined {
  if (obj.spec === undefined || obj.spec === null) obj.spec = {};
  return isObj(obj.spec) ? obj.spec : undefined;
}

/** parent[key] as an object, created when absent; undefined when it holds something else. */
function child(parent: Json, key: string): Json | undefined {
  if (parent[key] === undefined || parent[key] === null) parent[key] = {};
  const v = parent[key];
  return isObj(v) ? v : undefined;
}

export function defaultDeployment(obj: KubeObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  spec.replicas ??= 1;
  const strategy = child(spec, 'strategy');
  if (strategy) {
    strategy.type ||= 'RollingUpdate';
    const rolling = strategy.type === 'RollingUpdate' ? child(strategy, 'rollingUpdate') : undefined;
    if (rolling) {
      rolling.maxUnavailable ??= '25%';
      rolling.maxSurge ??= '25%';
    }
  }
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  defaultPodTemplate(spec.template);
}

export function defaultReplicaSet(obj: KubeObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  spec.replicas ??= 1;
  defaultPodTemplate(spec.template);
}

/** SetDefaults_PersistentVolumeClaim for a StatefulSet's claim templates. */
function defaultClaimTemplate(pvc: unknown): void {
  if (!isObj(pvc)) return;
  const spec = child(pvc, 'spec');
  if (spec) spec.volumeMode ??= 'Filesystem';
  const status = child(pvc, 'status');
  if (status) status.phase ||= 'Pending';
}

export function defaultStatefulSet(obj: KubeObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  spec.podManagementPolicy ||= 'OrderedReady';
  const strategy = child(spec, 'updateStrategy');
  if (strategy) {
    if (!strategy.type) {
      strategy.type = 'RollingUpdate';
      strategy.rollingUpdate ??= {};
    }
    if (strategy.type === 'RollingUpdate' && isObj(strategy.rollingUpdate)) strategy.rollingUpdate.partition ??= 0;
  }
  const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
  if (retention) {
    retention.whenDeleted ||= 'Retain';
    retention.whenScaled ||= 'Retain';
  }
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  defaultPodTemplate(spec.template);
  if (Array.isArray(spec.volumeClaimTemplates)) spec.volumeClaimTemplates.forEach(defaultClaimTemplate);
}

export function defaultDaemonSet(obj: KubeObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  const strategy = child(spec, 'updateStrategy');
  if (strategy) {
    strategy.type ||= 'RollingUpdate';
    const rolling = strategy.type === 'RollingUpdate' ? child(strategy, 'rollingUpdate') : undefined;
    if (rolling) {
      rolling.maxUnavailable ??= 1;
      rolling.maxSurge ??= 0;
    }
  }
  spec.revisionHistoryLimit ??= 10;
  defaultPodTemplate(spec.template);
}

/** SetDefaults_ReplicationController: the selector and the object's labels come from the template. */
export function defaultReplicationController(obj: KubeObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  const labels = fieldAt(spec.template, 'metadata', 'labels');
  if (isObj(labels)) {
    if (!isObj(spec.selector) || !Object.keys(spec.selector).length) spec.selector = { ...labels };
    copyLabels(obj, labels);
  }
  spec.replicas ??= 1;
  defaultPodTemplate(spec.template);
}

/** An object without labels takes its template's (Jobs and ReplicationControllers, upstream). */
function copyLabels(obj: KubeObject, labels: unknown): void {
  if (!isObj(labels) || !Object.keys(labels).length || !isObj(obj.metadata)) return;
  if (!isObj(obj.metadata.labels) || !Object.keys(obj.metadata.labels).length)
    obj.metadata.labels = { ...labels } as Record<string, string>;
}

/** SetDefaults_Job. Runs again after the selector is generated: upstream defaults on every read too. */
export function defaultJob(obj: KubeObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  if (spec.completions == null && spec.parallelism == null) spec.completions = 1;
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex != null ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
  const rules = fieldAt(spec.podFailurePolicy, 'rules');
  for (const rule of Array.isArray(rules) ? rules : []) {
    const conditions = fieldAt(rule, 'onPodConditions');
    for (const p of Array.isArray(conditions) ? conditions : []) if (isObj(p)) p.status ||= 'True';
  }
  copyLabels(obj, fieldAt(spec.template, 'metadata', 'labels'));
  defaultPodTemplate(spec.template);
}

export function defaultCronJob(obj: KubeObject): void {
  const spec = specOf(obj);
  if (!spec) return;
  spec.concurrencyPolicy ||= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  defaultPodTemplate(fieldAt(spec.jobTemplate, 'spec', 'template'));
}

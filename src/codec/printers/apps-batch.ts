/**
 * Workload kinds as upstream's printers show them: Deployment, ReplicaSet, StatefulSet,
 * DaemonSet, ControllerRevision, Job, CronJob and HorizontalPodAutoscaler (autoscaling/v1
 * objects read as upstream's conversion to the internal, v2-shaped, type).
 */
import type { Job } from '../../api/kinds.js';
import { conditionsOf, type KubeObject, type LabelSelector, type OwnerReference } from '../../api/object.js';
import type {
  AppsWorkload,
  ControllerRevision,
  HorizontalPodAutoscaler,
  MetricSpec,
  MetricStatus,
  PrintedCronJob,
  TemplateView,
} from '../../api/printable.js';
import {
  AGE,
  NAME,
  age,
  asList,
  boolPtr,
  col,
  formatLabels,
  formatLabelSelector,
  humanDuration,
  quantity,
  secondsBetween,
  selectorString,
  templateColumns,
  wide,
  type CellOf,
  type Column,
} from './common.js';

const SELECTOR_DOC = 'Label query over pods that should match the replica count.';
const selectorColumn = <T extends KubeObject>(sel: (o: T) => LabelSelector | null | undefined): Column<T> =>
  wide<T>('Selector', 'string', (o) => formatLabelSelector(sel(o)), SELECTOR_DOC);
/** The kinds with a pod template at spec.template (the workloads and Job). */
type Templated = KubeObject<{ template?: TemplateView }>;
const podTemplate = (o: Templated) => o.spec?.template?.spec;

/** A job condition of this type with status True (upstream hasJobCondition looks at the first of the type). */
const jobCondition = (o: Job, type: string): boolean =>
  conditionsOf(o).find((c) => c?.type === type)?.status === 'True';

export function jobStatus(o: Job): string {
  if (jobCondition(o, 'Complete')) return 'Complete';
  if (jobCondition(o, 'Failed')) return 'Failed';
  if (o.metadata?.deletionTimestamp) return 'Terminating';
  if (jobCondition(o, 'Suspended')) return 'Suspended';
  if (jobCondition(o, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

export function jobCompletions(o: Job): string {
  const succeeded = o.status?.succeeded ?? 0;
  if (typeof o.spec?.completions === 'number') return `${succeeded}/${o.spec.completions}`;
  const parallelism = o.spec?.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

/** Empty before the job starts; running time until now, else start to completion. */
export function jobDuration(o: Job, now: number): string {
  const start = o.status?.startTime;
  if (!start) return '';
  return humanDuration(secondsBetween(start, o.status?.completionTime ?? now));
}

/** The controller owner as `<kind>[.<group>]/<name>` (lower-cased group kind), `<none>` without one. */
function controllerOf(o: KubeObject): string {
  const ref = (asList(o.metadata?.ownerReferences) as (OwnerReference | undefined)[]).find(
    (r) => r?.controller === true,
  );
  if (!ref) return '<none>';
  const apiVersion = String(ref.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const groupKind = group ? `${ref.kind}.${group}` : String(ref.kind ?? '');
  return groupKind ? `${groupKind.toLowerCase()}/${ref.name}` : ref.name;
}

/** An HPA's metric specs and statuses in the v2 shape (autoscaling/v1's CPU target converted). */
function hpaMetrics(o: HorizontalPodAutoscaler): { specs: MetricSpec[]; statuses: MetricStatus[] } {
  if (Array.isArray(o.spec?.metrics) || !('targetCPUUtilizationPercentage' in (o.spec ?? {}))) {
    return { specs: asList(o.spec?.metrics), statuses: asList(o.status?.currentMetrics) };
  }
  const specs = [
    {
      type: 'Resource',
      resource: {
        name: 'cpu',
        target: { type: 'Utilization', averageUtilization: o.spec?.targetCPUUtilizationPercentage },
      },
    },
  ];
  const current = o.status?.currentCPUUtilizationPercentage;
  const statuses =
    typeof current === 'number'
      ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: current } } }]
      : [];
  return { specs, statuses };
}

/** One metric target as upstream's formatHPAMetrics prints it. */
function hpaMetric(spec: MetricSpec | undefined, status: MetricStatus | undefined): string {
  const unknown = '<unknown>';
  const pct = (v: unknown) => `${v}%`;
  switch (spec?.type) {
    case 'External':
    case 'Object': {
      const key = spec.type === 'External' ? 'external' : 'object';
      const target = spec[key]?.target ?? {},
        current = status?.[key]?.current;
      if (target.averageValue !== undefined)
        return `${current?.averageValue !== undefined ? quantity(current.averageValue) : unknown}/${quantity(target.averageValue)} (avg)`;
      return `${status?.[key] ? quantity(current?.value) : unknown}/${quantity(target.value)}`;
    }
    case 'Pods':
      return `${status?.pods ? quantity(status.pods.current?.averageValue) : unknown}/${quantity(spec.pods?.target?.averageValue)}`;
    case 'Resource':
    case 'ContainerResource': {
      const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
      const source = spec[key] ?? {},
        st = status?.[key];
      if (source.target?.averageValue !== undefined)
        return `${source.name}: ${st ? quantity(st.current?.averageValue) : unknown}/${quantity(source.target.averageValue)}`;
      const current =
        typeof st?.current?.averageUtilization === 'number' ? pct(st.current.averageUtilization) : unknown;
      const target =
        typeof source.target?.averageUtilization === 'number' ? pct(source.target.averageUtilization) : '<auto>';
      return `${source.name}: ${current}/${target}`;
    }
    default:
      return '<unknown type>';
  }
}

/** upstream formatHPAMetrics: up to two targets, then ` + N more...`; `<none>` without metrics. */
export function hpaTargets(o: HorizontalPodAutoscaler): string {
  const { specs, statuses } = hpaMetrics(o);
  if (!specs.length) return '<none>';
  const list = specs.map((s, i) => hpaMetric(s, statuses[i]));
  const shown = list.slice(0, 2).join(', ');
  return list.length > 2 ? `${shown} + ${list.length - 2} more...` : shown;
}

const CONTAINERS = templateColumns(podTemplate);
const lit = <T extends KubeObject>(name: string, type: Column['type'], cell: CellOf<T>, description: string) =>
  col(name, type, cell, 0, '', description);

export const APPS_BATCH_COLUMNS: Record<string, Column[]> = {
  Deployment: [
    NAME,
    lit(
      'Ready',
      'string',
      (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`,
      'Number of the pod with ready state',
    ),
    col('Up-to-date', 'string', (o) => o.status?.updatedReplicas ?? 0),
    col('Available', 'string', (o) => o.status?.availableReplicas ?? 0),
    AGE,
    ...CONTAINERS,
    wide('Selector', 'string', (o) => selectorString(o.spec?.selector) ?? '<invalid>', SELECTOR_DOC),
  ] satisfies Column<AppsWorkload>[],
  ReplicaSet: [
    NAME,
    col('Desired', 'integer', (o) => o.spec?.replicas ?? 0),
    col('Current', 'integer', (o) => o.status?.replicas ?? 0),
    col('Ready', 'integer', (o) => o.status?.readyReplicas ?? 0),
    AGE,
    ...CONTAINERS,
    selectorColumn((o) => o.spec?.selector),
  ] satisfies Column<AppsWorkload>[],
  StatefulSet: [
    NAME,
    lit(
      'Ready',
      'string',
      (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`,
      'Number of the pod with ready state',
    ),
    AGE,
    ...CONTAINERS,
  ] satisfies Column<AppsWorkload>[],
  DaemonSet: [
    NAME,
    col('Desired', 'integer', (o) => o.status?.desiredNumberScheduled ?? 0),
    col('Current', 'integer', (o) => o.status?.currentNumberScheduled ?? 0),
    col('Ready', 'integer', (o) => o.status?.numberReady ?? 0),
    col('Up-to-date', 'integer', (o) => o.status?.updatedNumberScheduled ?? 0),
    col('Available', 'integer', (o) => o.status?.numberAvailable ?? 0),
    col('Node Selector', 'string', (o) => formatLabels(o.spec?.template?.spec?.nodeSelector)),
    AGE,
    ...CONTAINERS,
    selectorColumn((o) => o.spec?.selector),
  ] satisfies Column<AppsWorkload>[],
  ControllerRevision: [
    NAME,
    lit('Controller', 'string', controllerOf, 'Controller of the object'),
    col('Revision', 'string', (o) => o.revision ?? 0),
    AGE,
  ] satisfies Column<ControllerRevision>[],
  Job: [
    NAME,
    lit('Status', 'string', jobStatus, 'Status of the job.'),
    col('Completions', 'string', jobCompletions),
    lit('Duration', 'string', jobDuration, 'Time required to complete the job.'),
    AGE,
    ...CONTAINERS,
    selectorColumn((o) => o.spec?.selector),
  ] satisfies Column<Job>[],
  CronJob: [
    NAME,
    col('Schedule', 'string', (o) => o.spec?.schedule ?? ''),
    col('Timezone', 'string', (o) => o.spec?.timeZone ?? '<none>'),
    col('Suspend', 'boolean', (o) => boolPtr(o.spec?.suspend)),
    col('Active', 'integer', (o) => asList(o.status?.active).length),
    col('Last Schedule', 'string', (o, now) =>
      o.status?.lastScheduleTime ? age(o.status.lastScheduleTime, now) : '<none>',
    ),
    AGE,
    ...templateColumns((o: PrintedCronJob) => o.spec?.jobTemplate?.spec?.template?.spec),
    selectorColumn((o) => o.spec?.jobTemplate?.spec?.selector),
  ] satisfies Column<PrintedCronJob>[],
  HorizontalPodAutoscaler: [
    NAME,
    col('Reference', 'string', (o) => `${o.spec?.scaleTargetRef?.kind ?? ''}/${o.spec?.scaleTargetRef?.name ?? ''}`),
    col('Targets', 'string', hpaTargets),
    col('MinPods', 'string', (o) => (typeof o.spec?.minReplicas === 'number' ? String(o.spec.minReplicas) : '<unset>')),
    col('MaxPods', 'string', (o) => o.spec?.maxReplicas ?? 0),
    col('Replicas', 'string', (o) => o.status?.currentReplicas ?? 0),
    AGE,
  ] satisfies Column<HorizontalPodAutoscaler>[],
};

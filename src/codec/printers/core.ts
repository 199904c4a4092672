/**
 * Core (v1) kinds as upstream's printers show them: Pod, PodTemplate, ReplicationController,
 * Namespace, ConfigMap, Secret, ServiceAccount, ResourceQuota, ComponentStatus, Node and Event.
 * Service, Endpoints and the volume kinds are in storage-networking.ts.
 */
import type { DataObject, Namespace, Node, ResourceQuota, ServiceAccount } from '../../api/kinds.js';
import { conditionsOf, type Condition, type KubeObject } from '../../api/object.js';
import type {
  ComponentStatus,
  ContainerStatus,
  EventObject,
  ObjectRef,
  PodTemplate,
  PrintedPod,
  PrintedReplicationController,
} from '../../api/printable.js';
import {
  AGE,
  NAME,
  age,
  asList,
  col,
  containerImages,
  containerNames,
  formatLabels,
  humanDuration,
  LABEL_DOMAINS,
  quantity,
  secondsBetween,
  templateColumns,
  wide,
  type CellOf,
  type Column,
} from './common.js';

/** What podSummary accumulates over the container statuses. */
interface PodTally {
  ready: number;
  restarts: number;
  /** when the last restarted container last finished (ms), 0 when unknown */
  lastRestart: number;
  reason: string;
}

const finishedAt = (c: ContainerStatus | undefined) => {
  const t = Date.parse(c?.lastState?.terminated?.finishedAt ?? '');
  return Number.isNaN(t) ? 0 : t;
};

/** upstream printPod's Ready, Status and Restarts cells. */
export function podSummary(pod: PrintedPod, now: number): { ready: string; status: string; restarts: string } {
  const spec = pod.spec ?? {},
    status = pod.status ?? {};
  const inits = asList(spec.initContainers);
  const total = asList(spec.containers).length + inits.filter((c) => c?.restartPolicy === 'Always').length;
  const phase = status.phase ?? '';
  let reason: string = status.reason || phase;
  if (asList(status.conditions).some((c) => c?.type === 'PodScheduled' && c?.reason === 'SchedulingGated'))
    reason = 'SchedulingGated';
  const t: PodTally = { ready: 0, restarts: 0, lastRestart: 0, reason };
  const sidecars = initTally(t, inits, asList(status.initContainerStatuses));
  const initialized = asList(status.conditions).find((c) => c?.type === 'Initialized')?.status === 'True';
  if (!sidecars.initializing || initialized) {
    t.restarts = sidecars.restarts;
    t.lastRestart = sidecars.lastRestart;
    containerTally(t, asList(status.containerStatuses), asList(status.conditions));
  }

  if (pod.metadata?.deletionTimestamp && status.reason === 'NodeLost') t.reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') t.reason = 'Terminating';

  let restartText = String(t.restarts);
  if (t.restarts !== 0 && t.lastRestart)
    restartText = `${t.restarts} (${humanDuration(secondsBetween(t.lastRestart, now))} ago)`;
  return { ready: `${t.ready}/${total}`, status: t.reason, restarts: restartText };
}

/**
 * The init container statuses, in order, until the first one not done (its state becomes the
 * reason, `Init:...`); returns whether the pod is still initializing and the restarts of the
 * restartable (sidecar) init containers, which count again beside the regular containers.
 */
function initTally(
  t: PodTally,
  inits: readonly ({ name?: string; restartPolicy?: string } | null)[],
  initStatuses: ContainerStatus[],
): { initializing: boolean; restarts: number; lastRestart: number } {
  const restartable = (name: string | undefined) =>
    inits.some((c) => c?.name === name && c?.restartPolicy === 'Always');
  let restarts = 0,
    lastRestart = 0;
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i],
      state = c?.state ?? {};
    t.restarts += c?.restartCount ?? 0;
    t.lastRestart = Math.max(t.lastRestart, finishedAt(c));
    const sidecar = restartable(c?.name);
    if (sidecar) {
      restarts += c?.restartCount ?? 0;
      lastRestart = Math.max(lastRestart, finishedAt(c));
    }
    if (state.terminated && (state.terminated.exitCode ?? 0) === 0) continue;
    if (sidecar && c?.started === true) {
      if (c.ready) t.ready++;
      continue;
    }
    if (state.terminated) {
      const term = state.terminated;
      t.reason = term.reason
        ? `Init:${term.reason}`
        : term.signal
          ? `Init:Signal:${term.signal}`
          : `Init:ExitCode:${term.exitCode ?? 0}`;
    } else if (state.waiting?.reason && state.waiting.reason !== 'PodInitializing') {
      t.reason = `Init:${state.waiting.reason}`;
    } else {
      t.reason = `Init:${i}/${inits.length}`;
    }
    return { initializing: true, restarts, lastRestart };
  }
  return { initializing: false, restarts, lastRestart };
}

/** The regular container statuses, last first (the first one's state wins the reason, like upstream). */
function containerTally(
  t: PodTally,
  statuses: ContainerStatus[],
  conditions: ({ type?: unknown; status?: unknown } | null)[],
): void {
  let hasRunning = false;
  for (let i = statuses.length - 1; i >= 0; i--) {
    const c = statuses[i],
      state = c?.state ?? {};
    t.restarts += c?.restartCount ?? 0;
    t.lastRestart = Math.max(t.lastRestart, finishedAt(c));
    if (state.waiting?.reason) t.reason = state.waiting.reason;
    else if (state.terminated?.reason) t.reason = state.terminated.reason;
    else if (state.terminated)
      t.reason = state.terminated.signal
        ? `Signal:${state.terminated.signal}`
        : `ExitCode:${state.terminated.exitCode ?? 0}`;
    else if (c?.ready && state.running) {
      hasRunning = true;
      t.ready++;
    }
  }
  // a pod whose last container completed but another still runs is Running (or NotReady)
  if (t.reason === 'Completed' && hasRunning) {
    t.reason = conditions.some((c) => c?.type === 'Ready' && c?.status === 'True') ? 'Running' : 'NotReady';
  }
}

function readinessGates(pod: PrintedPod): string {
  const gates = asList(pod.spec?.readinessGates);
  if (!gates.length) return '<none>';
  const conditions = asList(pod.status?.conditions);
  const met = gates.filter((g) => conditions.find((c) => c?.type === g?.conditionType)?.status === 'True').length;
  return `${met}/${gates.length}`;
}

const orNone = (v: unknown): string => (typeof v === 'string' && v ? v : '<none>');

/** upstream findNodeRoles: `node-role.<domain>/<role>` labels and the `<domain>/role` label, sorted. */
export function nodeRoles(node: Node): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata?.labels ?? {})) {
    for (const d of LABEL_DOMAINS) {
      const prefix = `node-role.${d}/`;
      if (k.startsWith(prefix) && k.length > prefix.length) roles.add(k.slice(prefix.length));
      else if (k === `${d}/role` && v) roles.add(String(v));
    }
  }
  return [...roles].sort().join(',') || '<none>';
}

/** upstream printNode: Ready / NotReady (False or Unknown) / Unknown (no Ready condition), then SchedulingDisabled */
function nodeStatus(o: Node): string {
  const ready = conditionsOf(o).find((c) => c?.type === 'Ready');
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (o.spec?.unschedulable === true) status.push('SchedulingDisabled');
  return status.join(',');
}

const nodeAddress = (o: Node, type: string): string =>
  asList(o.status?.addresses).find((a) => a?.type === type)?.address ?? '<none>';
const orUnknown = (v: unknown): string => (typeof v === 'string' && v ? v : '<unknown>');

/** Core v1 and events.<domain>/v1 Events as upstream's one printer sees them (the latter converted to core). */
function eventView(o: EventObject): {
  first: string | undefined;
  last: string | undefined;
  eventTime: string | undefined;
  series: EventObject['series'];
  count: number;
  target: ObjectRef;
  source: { component?: string; host?: string };
} {
  return {
    first: o.firstTimestamp ?? o.deprecatedFirstTimestamp,
    last: o.lastTimestamp ?? o.deprecatedLastTimestamp,
    eventTime: o.eventTime,
    series: o.series,
    count: o.count ?? o.deprecatedCount ?? 0,
    target: o.involvedObject ?? o.regarding ?? {},
    source: o.source ?? o.deprecatedSource ?? {},
  };
}

function eventTimes(o: EventObject, now: number): { first: string; last: string; count: number } {
  const e = eventView(o);
  const first = e.first ? age(e.first, now) : age(e.eventTime, now);
  let last = e.last ? age(e.last, now) : first;
  let count = e.count;
  if (e.series) {
    last = age(e.series.lastObservedTime, now);
    count = e.series.count ?? 0;
  } else if (count === 0) {
    count = 1;
  }
  return { first, last, count };
}

function eventTarget(o: EventObject): string {
  const t = eventView(o).target;
  const kind = String(t.kind ?? '').toLowerCase();
  return t.name ? `${kind}/${t.name}` : kind;
}

/**
 * formatEventSource: component (or the reporting controller), then `, host` (or reportingInstance).
 * Core v1 names the reporting controller `reportingComponent`, events/v1 `reportingController`.
 */
function eventSource(o: EventObject): string {
  const s = eventView(o).source;
  const component = s.component || o.reportingComponent || o.reportingController || '';
  const instance = s.host || o.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

/** upstream printResourceQuota: `resource: used/hard` of each hard resource, split into requests and `limits.*`. */
function quotaColumn(o: ResourceQuota, limits: boolean): string {
  const hard: Record<string, string> = o.status?.hard ?? {},
    used: Record<string, string> = o.status?.used ?? {};
  return Object.keys(hard)
    .sort()
    .filter((r) => {
      const p = r.split('.');
      return (p.length > 1 && p[0] === 'limits') === limits;
    })
    .map((r) => `${r}: ${quantity(used[r])}/${quantity(hard[r])}`)
    .join(', ');
}

function componentHealth(o: { conditions?: unknown }): [string, string, string] {
  const c = (asList(o.conditions) as ((Condition & { error?: string }) | undefined)[]).find(
    (x) => x?.type === 'Healthy',
  );
  if (!c) return ['Unknown', '', ''];
  return [c.status === 'True' ? 'Healthy' : 'Unhealthy', c.message ?? '', c.error ?? ''];
}

const count = (v: unknown): number => (v && typeof v === 'object' ? Object.keys(v).length : 0);
const lit = <T extends KubeObject>(name: string, type: Column['type'], cell: CellOf<T>, description: string) =>
  col(name, type, cell, 0, '', description);

export const CORE_COLUMNS: Record<string, Column[]> = {
  Pod: [
    NAME,
    lit(
      'Ready',
      'string',
      (o, now) => podSummary(o, now).ready,
      'The aggregate readiness state of this pod for accepting traffic.',
    ),
    lit(
      'Status',
      'string',
      (o, now) => podSummary(o, now).status,
      'The aggregate status of the containers in this pod.',
    ),
    lit(
      'Restarts',
      'string',
      (o, now) => podSummary(o, now).restarts,
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    AGE,
    wide('IP', 'string', (o) => orNone(o.status?.podIPs?.[0]?.ip ?? o.status?.podIP)),
    wide('Node', 'string', (o) => orNone(o.spec?.nodeName)),
    wide('Nominated Node', 'string', (o) => orNone(o.status?.nominatedNodeName)),
    wide('Readiness Gates', 'string', readinessGates),
  ] satisfies Column<PrintedPod>[],
  PodTemplate: [
    NAME,
    lit(
      'Containers',
      'string',
      (o) => containerNames(o.template?.spec?.containers),
      'Names of each container in the template.',
    ),
    lit(
      'Images',
      'string',
      (o) => containerImages(o.template?.spec?.containers),
      'Images referenced by each container in the template.',
    ),
    lit('Pod Labels', 'string', (o) => formatLabels(o.template?.metadata?.labels), 'The labels for the pod template.'),
  ] satisfies Column<PodTemplate>[],
  ReplicationController: [
    NAME,
    col('Desired', 'integer', (o) => o.spec?.replicas ?? 0),
    col('Current', 'integer', (o) => o.status?.replicas ?? 0),
    col('Ready', 'integer', (o) => o.status?.readyReplicas ?? 0),
    AGE,
    ...templateColumns((o: PrintedReplicationController) => o.spec?.template?.spec),
    wide('Selector', 'string', (o) => formatLabels(o.spec?.selector)),
  ] satisfies Column<PrintedReplicationController>[],
  Namespace: [
    NAME,
    lit('Status', 'string', (o) => o.status?.phase ?? '', 'The status of the namespace'),
    AGE,
  ] satisfies Column<Namespace>[],
  ConfigMap: [
    NAME,
    col('Data', 'string', (o) => count(o.data) + count(o.binaryData)),
    AGE,
  ] satisfies Column<DataObject>[],
  Secret: [
    NAME,
    col('Type', 'string', (o) => o.type ?? ''),
    col('Data', 'string', (o) => count(o.data)),
    AGE,
  ] satisfies Column<DataObject>[],
  ServiceAccount: [
    NAME,
    col('Secrets', 'string', (o) => asList(o.secrets).length),
    AGE,
  ] satisfies Column<ServiceAccount>[],
  ResourceQuota: [
    NAME,
    lit(
      'Request',
      'string',
      (o) => quotaColumn(o, false),
      'Request represents a minimum amount of cpu/memory that a container may consume.',
    ),
    lit(
      'Limit',
      'string',
      (o) => quotaColumn(o, true),
      'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
    ),
    AGE,
  ] satisfies Column<ResourceQuota>[],
  ComponentStatus: [
    NAME,
    lit('Status', 'string', (o) => componentHealth(o)[0], 'Status of the component conditions'),
    lit('Message', 'string', (o) => componentHealth(o)[1], 'Message of the component conditions'),
    lit('Error', 'string', (o) => componentHealth(o)[2], 'Error of the component conditions'),
  ] satisfies Column<ComponentStatus>[],
  Node: [
    NAME,
    lit('Status', 'string', nodeStatus, 'The status of the node'),
    lit('Roles', 'string', nodeRoles, 'The roles of the node'),
    AGE,
    col('Version', 'string', (o) => o.status?.nodeInfo?.kubeletVersion ?? ''),
    wide('Internal-IP', 'string', (o) => nodeAddress(o, 'InternalIP')),
    wide('External-IP', 'string', (o) => nodeAddress(o, 'ExternalIP')),
    wide('OS-Image', 'string', (o) => orUnknown(o.status?.nodeInfo?.osImage)),
    wide('Kernel-Version', 'string', (o) => orUnknown(o.status?.nodeInfo?.kernelVersion)),
    wide('Container-Runtime', 'string', (o) => orUnknown(o.status?.nodeInfo?.containerRuntimeVersion)),
  ] satisfies Column<Node>[],
  // core v1 and events.<domain>/v1 Events print alike, as upstream's one printer
  Event: [
    col('Last Seen', 'string', (o, now) => eventTimes(o, now).last),
    col('Type', 'string', (o) => o.type ?? ''),
    col('Reason', 'string', (o) => o.reason ?? ''),
    col('Object', 'string', eventTarget),
    wide('Subobject', 'string', (o) => eventView(o).target.fieldPath ?? ''),
    wide('Source', 'string', eventSource),
    col('Message', 'string', (o) => String(o.message ?? o.note ?? '').trim()),
    wide('First Seen', 'string', (o, now) => eventTimes(o, now).first),
    wide('Count', 'string', (o, now) => eventTimes(o, now).count),
    col('Name', 'string', (o) => o.metadata?.name ?? '', 1, 'name', 'Name must be unique within a namespace.'),
  ] satisfies Column<EventObject>[],
};

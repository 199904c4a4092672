/**
 * HorizontalPodAutoscaler autoscaling/v1 ⇄ autoscaling/v2, lossless both ways, as upstream's
 * conversion: v1 carries the CPU utilization target in its own fields; everything v1 has no
 * field for travels in annotations (`autoscaling.alpha.<domain>/metrics`, `current-metrics`,
 * `conditions`, `behavior`), with metrics in v1's MetricSpec/MetricStatus shape.
 */
import type { KubeObject, ObjectMeta } from '../../api/object.js';

/** Plain JSON fields: a metric's values (v2 MetricTarget, or v1's side-prefixed `targetAverageValue`), a v1 metric source. */
type Values = Record<string, unknown>;
/** A v2 metric source (MetricSpec: side `target`, MetricStatus: side `current`). */
type V2Source = {
  describedObject?: unknown;
  metric?: { name?: unknown; selector?: unknown };
  name?: unknown;
  container?: unknown;
  target?: Values;
  current?: Values;
};
/**
 * A v2 MetricSpec or MetricStatus, and a v1 one (sources as plain fields). A metric of type X
 * has its X member: validation checks written objects, and the server writes the annotations.
 */
type V2Metric = {
  type?: unknown;
  object?: V2Source;
  pods?: V2Source;
  resource?: V2Source;
  containerResource?: V2Source;
  external?: V2Source;
};
type V1Metric = {
  type?: unknown;
  object?: Values;
  pods?: Values;
  resource?: Values;
  containerResource?: Values;
  external?: Values;
};
/** autoscaling/v2 and autoscaling/v1 HorizontalPodAutoscaler, as validated against their schemas. */
export type HpaV2 = KubeObject<
  { metrics?: V2Metric[]; behavior?: unknown; scaleTargetRef?: unknown; minReplicas?: unknown; maxReplicas?: unknown },
  {
    currentMetrics?: V2Metric[];
    conditions?: unknown[];
    observedGeneration?: unknown;
    lastScaleTime?: unknown;
    currentReplicas?: unknown;
    desiredReplicas?: unknown;
  }
>;
export type HpaV1 = KubeObject<
  {
    targetCPUUtilizationPercentage?: unknown;
    scaleTargetRef?: unknown;
    minReplicas?: unknown;
    maxReplicas?: unknown;
  },
  {
    currentCPUUtilizationPercentage?: unknown;
    observedGeneration?: unknown;
    lastScaleTime?: unknown;
    currentReplicas?: unknown;
    desiredReplicas?: unknown;
  }
>;

const CPU_UTILIZATION = (m: V2Metric): m is V2Metric & { resource: { target: Values } } =>
  m.type === 'Resource' &&
  m.resource?.name === 'cpu' &&
  m.resource?.target?.type === 'Utilization' &&
  m.resource.target.averageUtilization !== undefined;
const CPU_CURRENT = (m: V2Metric): m is V2Metric & { resource: { current: Values } } =>
  m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource?.current?.averageUtilization !== undefined;

const defined = (o: Values): Values => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

function annotationKeys(domain: string) {
  const p = `autoscaling.alpha.${domain}`;
  return {
    metrics: `${p}/metrics`,
    currentMetrics: `${p}/current-metrics`,
    conditions: `${p}/conditions`,
    behavior: `${p}/behavior`,
  };
}

/**
 * The two sides of a metric: the spec's `target` and the status's `current`. v1 names their
 * values with the side as prefix (`targetAverageValue`, `currentAverageValue`, ...); v2 nests
 * them in a `target` (which also carries its `type`) or `current` object.
 */
type Side = 'target' | 'current';

/** v2 MetricSpec (side `target`) or MetricStatus (side `current`) → v1 */
function metricToV1(m: V2Metric, side: Side): Values {
  const v =
    m.object?.[side] ?? m.pods?.[side] ?? m.resource?.[side] ?? m.containerResource?.[side] ?? m.external?.[side] ?? {};
  const value = `${side}Value`,
    averageValue = `${side}AverageValue`,
    averageUtilization = `${side}AverageUtilization`;
  switch (m.type) {
    case 'Object':
      return {
        type: 'Object',
        object: defined({
          target: m.object!.describedObject,
          metricName: m.object!.metric?.name,
          selector: m.object!.metric?.selector,
          [value]: v.value,
          averageValue: v.averageValue,
        }),
      };
    case 'Pods':
      return {
        type: 'Pods',
        pods: defined({
          metricName: m.pods!.metric?.name,
          selector: m.pods!.metric?.selector,
          [averageValue]: v.averageValue,
        }),
      };
    case 'Resource':
      return {
        type: 'Resource',
        resource: defined({
          name: m.resource!.name,
          [averageUtilization]: v.averageUtilization,
          [averageValue]: v.averageValue,
        }),
      };
    case 'ContainerResource':
      return {
        type: 'ContainerResource',
        containerResource: defined({
          name: m.containerResource!.name,
          container: m.containerResource!.container,
          [averageUtilization]: v.averageUtilization,
          [averageValue]: v.averageValue,
        }),
      };
    case 'External':
      return {
        type: 'External',
        external: defined({
          metricName: m.external!.metric?.name,
          metricSelector: m.external!.metric?.selector,
          [value]: v.value,
          [averageValue]: v.averageValue,
        }),
      };
    default:
      return m;
  }
}

/** v2 MetricTarget: its type is the kind of value it holds */
function target(value: unknown, averageValue: unknown, averageUtilization?: unknown): Values {
  const type = averageUtilization !== undefined ? 'Utilization' : value !== undefined ? 'Value' : 'AverageValue';
  return defined({ type, value, averageValue, averageUtilization });
}

/** v2 MetricValueStatus */
function valueStatus(value: unknown, averageValue: unknown, averageUtilization?: unknown): Values {
  return defined({ value, averageValue, averageUtilization });
}

/** v1 MetricSpec (side `target`) or MetricStatus (side `current`) → v2 */
function metricToV2(m: V1Metric, side: Side): Values {
  const metric = (name: unknown, selector: unknown) => defined({ name, selector });
  const values = side === 'target' ? target : valueStatus;
  const value = `${side}Value`,
    averageValue = `${side}AverageValue`,
    averageUtilization = `${side}AverageUtilization`;
  switch (m.type) {
    case 'Object':
      return {
        type: 'Object',
        object: defined({
          describedObject: m.object!.target,
          metric: metric(m.object!.metricName, m.object!.selector),
          [side]: values(m.object![value], m.object!.averageValue),
        }),
      };
    case 'Pods':
      return {
        type: 'Pods',
        pods: {
          metric: metric(m.pods!.metricName, m.pods!.selector),
          [side]: values(undefined, m.pods![averageValue]),
        },
      };
    case 'Resource':
      return {
        type: 'Resource',
        resource: {
          name: m.resource!.name,
          [side]: values(undefined, m.resource![averageValue], m.resource![averageUtilization]),
        },
      };
    case 'ContainerResource':
      return {
        type: 'ContainerResource',
        containerResource: {
          name: m.containerResource!.name,
          container: m.containerResource!.container,
          [side]: values(undefined, m.containerResource![averageValue], m.containerResource![averageUtilization]),
        },
      };
    case 'External':
      return {
        type: 'External',
        external: {
          metric: metric(m.external!.metricName, m.external!.metricSelector),
          [side]: values(m.external![value], m.external![averageValue]),
        },
      };
    default:
      return m;
  }
}

function withAnnotations(meta: ObjectMeta, set: Record<string, string | undefined>, remove: string[]): ObjectMeta {
  const a: Record<string, string> = { ...(meta.annotations ?? {}) };
  for (const k of remove) delete a[k];
  for (const [k, v] of Object.entries(set)) if (v !== undefined) a[k] = v;
  const out = { ...meta };
  if (Object.keys(a).length) out.annotations = a;
  else delete out.annotations;
  return out;
}

/** autoscaling/v2 → autoscaling/v1 (a new object; the input is not changed). */
export function hpaV2ToV1(o: HpaV2, domain: string): HpaV1 {
  const keys = annotationKeys(domain);
  const spec = o.spec ?? {};
  const metrics: V2Metric[] = spec.metrics ?? [];
  const cpu = metrics.find(CPU_UTILIZATION);
  const others = metrics.filter((m) => m !== cpu);
  const status = o.status;
  const current: V2Metric[] = status?.currentMetrics ?? [];
  const cpuNow = current.find(CPU_CURRENT);
  const otherNow = current.filter((m) => m !== cpuNow);
  const meta = withAnnotations(
    o.metadata ?? {},
    {
      [keys.metrics]: others.length ? JSON.stringify(others.map((m) => metricToV1(m, 'target'))) : undefined,
      [keys.behavior]: spec.behavior ? JSON.stringify(spec.behavior) : undefined,
      [keys.currentMetrics]: otherNow.length
        ? JSON.stringify(otherNow.map((m) => metricToV1(m, 'current')))
        : undefined,
      [keys.conditions]: status?.conditions?.length ? JSON.stringify(status.conditions) : undefined,
    },
    Object.values(keys),
  );
  const out: HpaV1 = { ...o, apiVersion: 'autoscaling/v1', metadata: meta };
  // an absent spec stays absent (conversion never adds fields the object did not have)
  if (o.spec !== undefined)
    out.spec = defined({
      scaleTargetRef: spec.scaleTargetRef,
      minReplicas: spec.minReplicas,
      maxReplicas: spec.maxReplicas,
      targetCPUUtilizationPercentage: cpu?.resource.target.averageUtilization,
    });
  if (status) {
    out.status = defined({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas,
      currentCPUUtilizationPercentage: cpuNow?.resource.current.averageUtilization,
    });
  }
  return out;
}

function parsedAnnotation(meta: ObjectMeta, key: string): unknown {
  const v = meta.annotations?.[key];
  if (typeof v !== 'string') return undefined;
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

/** A list annotation's items: the server writes these (hpaV2ToV1) as JSON lists of v1 metrics. */
function annotationList(meta: ObjectMeta, key: string): V1Metric[] {
  return (parsedAnnotation(meta, key) ?? []) as V1Metric[];
}

/** autoscaling/v1 → autoscaling/v2 (a new object; the input is not changed). */
export function hpaV1ToV2(o: HpaV1, domain: string): HpaV2 {
  const keys = annotationKeys(domain);
  const meta0 = o.metadata ?? {};
  const spec = o.spec ?? {};
  const metrics = annotationList(meta0, keys.metrics).map((m) => metricToV2(m, 'target'));
  if (spec.targetCPUUtilizationPercentage !== undefined) {
    metrics.push({
      type: 'Resource',
      resource: {
        name: 'cpu',
        target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage },
      },
    });
  }
  const out: HpaV2 = { ...o, apiVersion: 'autoscaling/v2', metadata: withAnnotations(meta0, {}, Object.values(keys)) };
  const behavior = parsedAnnotation(meta0, keys.behavior);
  if (o.spec !== undefined || metrics.length || behavior) {
    out.spec = defined({
      scaleTargetRef: spec.scaleTargetRef,
      minReplicas: spec.minReplicas,
      maxReplicas: spec.maxReplicas,
      metrics: metrics.length ? metrics : undefined,
      behavior,
    });
  }
  const status = o.status;
  if (status) {
    const current = annotationList(meta0, keys.currentMetrics).map((m) => metricToV2(m, 'current'));
    if (status.currentCPUUtilizationPercentage !== undefined) {
      current.push({
        type: 'Resource',
        resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } },
      });
    }
    out.status = defined({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas,
      currentMetrics: current.length ? current : undefined,
      conditions: parsedAnnotation(meta0, keys.conditions),
    });
  }
  return out;
}

/**
 * HorizontalPodAutoscaler autoscaling/v1 ⇄ autoscaling/v2, lossless both ways, as upstream's
 * conversion: v1 carries the CPU utilization target in its own fields; everything v1 has no
 * field for travels in annotations (`autoscaling.alpha.<domain>/metrics`, `current-metrics`,
 * `conditions`, `behavior`), with metrics in v1's MetricSpec/MetricStatus shape.
 */

type Obj = Record<string, any>;

const CPU_UTILIZATION = (m: Obj): boolean =>
  m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource?.target?.type === 'Utilization' && m.resource.target.averageUtilization !== undefined;
const CPU_CURRENT = (m: Obj): boolean =>
  m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource?.current?.averageUtilization !== undefined;

const defined = (o: Obj): Obj => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

function annotationKeys(domain: string) {
  const p = `autoscaling.alpha.${domain}`;
  return { metrics: `${p}/metrics`, currentMetrics: `${p}/current-metrics`, conditions: `${p}/conditions`, behavior: `${p}/behavior` };
}

/** v2 MetricSpec → v1 MetricSpec */
function specToV1(m: Obj): Obj {
  const t = m.object?.target ?? m.pods?.target ?? m.resource?.target ?? m.containerResource?.target ?? m.external?.target ?? {};
  switch (m.type) {
    case 'Object': return { type: 'Object', object: defined({ target: m.object.describedObject, metricName: m.object.metric?.name, selector: m.object.metric?.selector, targetValue: t.value, averageValue: t.averageValue }) };
    case 'Pods': return { type: 'Pods', pods: defined({ metricName: m.pods.metric?.name, selector: m.pods.metric?.selector, targetAverageValue: t.averageValue }) };
    case 'Resource': return { type: 'Resource', resource: defined({ name: m.resource.name, targetAverageUtilization: t.averageUtilization, targetAverageValue: t.averageValue }) };
    case 'ContainerResource': return { type: 'ContainerResource', containerResource: defined({ name: m.containerResource.name, container: m.containerResource.container, targetAverageUtilization: t.averageUtilization, targetAverageValue: t.averageValue }) };
    case 'External': return { type: 'External', external: defined({ metricName: m.external.metric?.name, metricSelector: m.external.metric?.selector, targetValue: t.value, targetAverageValue: t.averageValue }) };
    default: return m;
  }
}

function target(value: unknown, averageValue: unknown, averageUtilization?: unknown): Obj {
  const type = averageUtilization !== undefined ? 'Utilization' : value !== undefined ? 'Value' : 'AverageValue';
  return defined({ type, value, averageValue, averageUtilization });
}

/** v1 MetricSpec → v2 MetricSpec */
function specToV2(m: Obj): Obj {
  const metric = (name: unknown, selector: unknown) => defined({ name, selector });
  switch (m.type) {
    case 'Object': return { type: 'Object', object: defined({ describedObject: m.object.target, metric: metric(m.object.metricName, m.object.selector), target: target(m.object.targetValue, m.object.averageValue) }) };
    case 'Pods': return { type: 'Pods', pods: { metric: metric(m.pods.metricName, m.pods.selector), target: target(undefined, m.pods.targetAverageValue) } };
    case 'Resource': return { type: 'Resource', resource: { name: m.resource.name, target: target(undefined, m.resource.targetAverageValue, m.resource.targetAverageUtilization) } };
    case 'ContainerResource': return { type: 'ContainerResource', containerResource: { name: m.containerResource.name, container: m.containerResource.container, target: target(undefined, m.containerResource.targetAverageValue, m.containerResource.targetAverageUtilization) } };
    case 'External': return { type: 'External', external: { metric: metric(m.external.metricName, m.external.metricSelector), target: target(m.external.targetValue, m.external.targetAverageValue) } };
    default: return m;
  }
}

/** v2 MetricStatus → v1 MetricStatus */
function statusToV1(m: Obj): Obj {
  const c = m.object?.current ?? m.pods?.current ?? m.resource?.current ?? m.containerResource?.current ?? m.external?.current ?? {};
  switch (m.type) {
    case 'Object': return { type: 'Object', object: defined({ target: m.object.describedObject, metricName: m.object.metric?.name, selector: m.object.metric?.selector, currentValue: c.value, averageValue: c.averageValue }) };
    case 'Pods': return { type: 'Pods', pods: defined({ metricName: m.pods.metric?.name, selector: m.pods.metric?.selector, currentAverageValue: c.averageValue }) };
    case 'Resource': return { type: 'Resource', resource: defined({ name: m.resource.name, currentAverageUtilization: c.averageUtilization, currentAverageValue: c.averageValue }) };
    case 'ContainerResource': return { type: 'ContainerResource', containerResource: defined({ name: m.containerResource.name, container: m.containerResource.container, currentAverageUtilization: c.averageUtilization, currentAverageValue: c.averageValue }) };
    case 'External': return { type: 'External', external: defined({ metricName: m.external.metric?.name, metricSelector: m.external.metric?.selector, currentValue: c.value, currentAverageValue: c.averageValue }) };
    default: return m;
  }
}

/** v1 MetricStatus → v2 MetricStatus */
function statusToV2(m: Obj): Obj {
  const metric = (name: unknown, selector: unknown) => defined({ name, selector });
  const current = (value: unknown, averageValue: unknown, averageUtilization?: unknown) => defined({ value, averageValue, averageUtilization });
  switch (m.type) {
    case 'Object': return { type: 'Object', object: defined({ describedObject: m.object.target, metric: metric(m.object.metricName, m.object.selector), current: current(m.object.currentValue, m.object.averageValue) }) };
    case 'Pods': return { type: 'Pods', pods: { metric: metric(m.pods.metricName, m.pods.selector), current: current(undefined, m.pods.currentAverageValue) } };
    case 'Resource': return { type: 'Resource', resource: { name: m.resource.name, current: current(undefined, m.resource.currentAverageValue, m.resource.currentAverageUtilization) } };
    case 'ContainerResource': return { type: 'ContainerResource', containerResource: { name: m.containerResource.name, container: m.containerResource.container, current: current(undefined, m.containerResource.currentAverageValue, m.containerResource.currentAverageUtilization) } };
    case 'External': return { type: 'External', external: { metric: metric(m.external.metricName, m.external.metricSelector), current: current(m.external.currentValue, m.external.currentAverageValue) } };
    default: return m;
  }
}

function withAnnotations(meta: Obj, set: Record<string, string | undefined>, remove: string[]): Obj {
  const a: Record<string, string> = { ...(meta.annotations ?? {}) };
  for (const k of remove) delete a[k];
  for (const [k, v] of Object.entries(set)) if (v !== undefined) a[k] = v;
  const out = { ...meta };
  if (Object.keys(a).length) out.annotations = a; else delete out.annotations;
  return out;
}

/** autoscaling/v2 → autoscaling/v1 (a new object; the input is not changed). */
export function hpaV2ToV1(o: Obj, domain: string): Obj {
  const keys = annotationKeys(domain);
  const spec = o.spec ?? {};
  const metrics: Obj[] = spec.metrics ?? [];
  const cpu = metrics.find(CPU_UTILIZATION);
  const others = metrics.filter((m) => m !== cpu);
  const status = o.status;
  const current: Obj[] = status?.currentMetrics ?? [];
  const cpuNow = current.find(CPU_CURRENT);
  const otherNow = current.filter((m) => m !== cpuNow);
  const meta = withAnnotations(o.metadata ?? {}, {
    [keys.metrics]: others.length ? JSON.stringify(others.map(specToV1)) : undefined,
    [keys.behavior]: spec.behavior ? JSON.stringify(spec.behavior) : undefined,
    [keys.currentMetrics]: otherNow.length ? JSON.stringify(otherNow.map(statusToV1)) : undefined,
    [keys.conditions]: status?.conditions?.length ? JSON.stringify(status.conditions) : undefined,
  }, Object.values(keys));
  const out: Obj = { ...o, apiVersion: 'autoscaling/v1', metadata: meta };
  // an absent spec stays absent (conversion never adds fields the object did not have)
  if (o.spec !== undefined) out.spec = defined({ scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, targetCPUUtilizationPercentage: cpu?.resource.target.averageUtilization });
  if (status) {
    out.status = defined({
      observedGeneration: status.observedGeneration, lastScaleTime: status.lastScaleTime, currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas, currentCPUUtilizationPercentage: cpuNow?.resource.current.averageUtilization,
    });
  }
  return out;
}

function parsedAnnotation(meta: Obj, key: string): any {
  const v = meta.annotations?.[key];
  if (typeof v !== 'string') return undefined;
  try { return JSON.parse(v); } catch { return undefined; }
}

/** autoscaling/v1 → autoscaling/v2 (a new object; the input is not changed). */
export function hpaV1ToV2(o: Obj, domain: string): Obj {
  const keys = annotationKeys(domain);
  const meta0 = o.metadata ?? {};
  const spec = o.spec ?? {};
  const metrics: Obj[] = (parsedAnnotation(meta0, keys.metrics) ?? []).map(specToV2);
  if (spec.targetCPUUtilizationPercentage !== undefined) {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  const out: Obj = { ...o, apiVersion: 'autoscaling/v2', metadata: withAnnotations(meta0, {}, Object.values(keys)) };
  const behavior = parsedAnnotation(meta0, keys.behavior);
  if (o.spec !== undefined || metrics.length || behavior) {
    out.spec = defined({
      scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas,
      metrics: metrics.length ? metrics : undefined, behavior,
    });
  }
  const status = o.status;
  if (status) {
    const current: Obj[] = (parsedAnnotation(meta0, keys.currentMetrics) ?? []).map(statusToV2);
    if (status.currentCPUUtilizationPercentage !== undefined) {
      current.push({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } });
    }
    out.status = defined({
      observedGeneration: status.observedGeneration, lastScaleTime: status.lastScaleTime, currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas, currentMetrics: current.length ? current : undefined,
      conditions: parsedAnnotation(meta0, keys.conditions),
    });
  }
  return out;
}

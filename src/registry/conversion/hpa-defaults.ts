/**
 * HorizontalPodAutoscaler defaults, as upstream's SetDefaults_HorizontalPodAutoscaler
 * (autoscaling/v1 and autoscaling/v2, v1.32). Upstream defaults on every decode, including
 * reads from storage: applied here to each written object in its own version and to the
 * stored autoscaling/v2 form, so a v1 write reads back with v2's default metric.
 */
import { isRecord, type KubeObject } from '../../api/object.js';

type Obj = Record<string, unknown>;

/** autoscaling.DefaultCPUUtilization */
const DEFAULT_CPU_UTILIZATION = 80;

const scaleUpRules = (): Obj => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});

/** scale-down keeps stabilizationWindowSeconds unset: the controller's flag decides */
const scaleDownRules = (): Obj => ({
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
});

/** copyHPAScalingRules: every field the object sets wins over the default. */
function rules(given: unknown, defaults: Obj): Obj {
  if (!isRecord(given)) return defaults;
  const out = { ...defaults };
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies']) if (given[k] != null) out[k] = given[k];
  return out;
}

/** autoscaling/v2 defaults, in place: minReplicas 1, CPU utilization 80% when no metric, full behavior rules. */
export function defaultHpaV2<T extends KubeObject>(obj: T): T {
  const spec = obj.spec;
  if (!isRecord(spec)) return obj;
  spec.minReplicas ??= 1;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } },
      },
    ];
  }
  const b = spec.behavior;
  if (isRecord(b)) {
    spec.behavior = {
      ...b,
      scaleUp: rules(b.scaleUp, scaleUpRules()),
      scaleDown: rules(b.scaleDown, scaleDownRules()),
    };
  }
  return obj;
}

/** autoscaling/v1 defaults, in place: minReplicas 1 (the CPU target stays unset in v1). */
export function defaultHpaV1<T extends KubeObject>(obj: T): T {
  const spec = obj.spec;
  if (isRecord(spec)) spec.minReplicas ??= 1;
  return obj;
}

/** The defaults of the object's own version (autoscaling/v1 or autoscaling/v2). */
export function defaultHpa<T extends KubeObject>(obj: T): T {
  return typeof obj.apiVersion === 'string' && obj.apiVersion.endsWith('/v1') ? defaultHpaV1(obj) : defaultHpaV2(obj);
}

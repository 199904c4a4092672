import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import type { StatusCause } from '../../api/status.js';

/** Pods: upstream defaults for the fields every client reads, phase Pending at creation. */
export const podStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    const spec = (obj.spec ??= {});
    spec.restartPolicy ??= 'Always';
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.schedulerName ??= 'default-scheduler';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.securityContext ??= {};
    spec.enableServiceLinks ??= true;
    spec.preemptionPolicy ??= 'PreemptLowerPriority';
    spec.priority ??= 0;
    for (const c of spec.containers ?? []) {
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      c.imagePullPolicy ??= c.image && !String(c.image).includes(':') || String(c.image).endsWith(':latest') ? 'Always' : 'IfNotPresent';
      c.resources ??= {};
    }
    obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
  },
  validate(obj) {
    const causes: StatusCause[] = [];
    const containers = obj.spec?.containers;
    if (!Array.isArray(containers) || containers.length === 0) {
      causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' });
      return causes;
    }
    const seen = new Set<string>();
    containers.forEach((c: any, i: number) => {
      if (!c?.name) causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `spec.containers[${i}].name` });
      else if (seen.has(c.name)) causes.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: "${c.name}"`, field: `spec.containers[${i}].name` });
      else seen.add(c.name);
      if (!c?.image) causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `spec.containers[${i}].image` });
    });
    return causes;
  },
};

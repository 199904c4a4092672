/**
 * ValidatePodUpdate: after creation a Pod's spec may change only in the fields upstream lets
 * change (images, activeDeadlineSeconds, added tolerations, removed schedulingGates, a
 * negative terminationGracePeriodSeconds set to 1); everything else is one `spec` Forbidden cause.
 */
import { forbidden, invalid, same, type Cause } from './field-errors.js';
import type { Container } from '../../api/kinds.js';
import type { KubeObject } from '../../api/object.js';
import { asArray } from './pod-spec.js';

const UPDATABLE = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
].join(',');

export const POD_UPDATE_FORBIDDEN = `pod updates may not change fields other than ${UPDATABLE}`;

/** A pod spec compared field by field; the two numeric fields read here by value. */
type UpdateSpec = Record<string, unknown> & {
  activeDeadlineSeconds?: number | null;
  terminationGracePeriodSeconds?: number;
};

export function validatePodUpdate(obj: KubeObject<UpdateSpec>, old: KubeObject<UpdateSpec>): Cause[] {
  const spec = obj.spec ?? {};
  const was = old.spec ?? {};
  const out = [...activeDeadline(spec, was)];
  asArray(was.tolerations).forEach((t, i) => {
    if (!asArray(spec.tolerations).some((n) => same(n, t))) {
      out.push(
        forbidden(`spec.tolerations[${i}]`, 'existing toleration can not be modified except its tolerationSeconds'),
      );
    }
  });
  asArray(spec.schedulingGates).forEach((g, i) => {
    if (!asArray(was.schedulingGates).some((o) => same(o, g)))
      out.push(forbidden(`spec.schedulingGates[${i}]`, 'only deletion is allowed, but found new scheduling gate'));
  });
  const munged = structuredClone(spec);
  for (const list of ['containers', 'initContainers'] as const) {
    asArray<Container | undefined>(munged[list]).forEach((c, i) => {
      const prev = asArray<Container | undefined>(was[list])[i];
      if (prev && c && typeof c === 'object') {
        if (prev.image === undefined) delete c.image;
        else c.image = prev.image;
      }
    });
  }
  for (const f of ['activeDeadlineSeconds', 'tolerations', 'schedulingGates']) {
    if (was[f] === undefined) delete munged[f];
    else munged[f] = was[f];
  }
  if ((was.terminationGracePeriodSeconds as number) < 0 && munged.terminationGracePeriodSeconds === 1)
    munged.terminationGracePeriodSeconds = was.terminationGracePeriodSeconds;
  if (!same(munged, was)) out.push(forbidden('spec', POD_UPDATE_FORBIDDEN));
  return out;
}

function activeDeadline(spec: UpdateSpec, was: UpdateSpec): Cause[] {
  const now = spec.activeDeadlineSeconds;
  const before = was.activeDeadlineSeconds;
  if (now === undefined || now === null) {
    return before !== undefined && before !== null
      ? [invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value')]
      : [];
  }
  if (!Number.isInteger(now) || now < 0 || now > 2147483647)
    return [invalid('spec.activeDeadlineSeconds', now, 'must be between 0 and 2147483647, inclusive')];
  if (typeof before === 'number' && before < now)
    return [invalid('spec.activeDeadlineSeconds', now, 'must be less than or equal to previous value')];
  return [];
}

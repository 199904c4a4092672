/**
 * PersistentVolumeClaims: after creation the spec is fixed except a bound claim's storage
 * request growing (resize), a first volumeName and a storageClassName set from nil.
 */
import type { PersistentVolumeClaim, PvcSpec } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { forbidden, same, type Cause } from './field-errors.js';
import { quantityValue } from './quantity.js';
import { validateResources } from './pod-spec.js';

const IMMUTABLE =
  'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims';

export function validatePVCUpdate(obj: PersistentVolumeClaim, old: PersistentVolumeClaim): Cause[] {
  const spec: PvcSpec = structuredClone(obj.spec ?? {});
  const was: PvcSpec = structuredClone(old.spec ?? {});
  if (!was.volumeName) was.volumeName = spec.volumeName;
  if (was.storageClassName === undefined) was.storageClassName = spec.storageClassName;
  const bound = obj.status?.phase === 'Bound';
  if (bound) {
    for (const s of [spec, was]) if (s.resources?.requests) delete s.resources.requests.storage;
    spec.volumeAttributesClassName = was.volumeAttributesClassName;
  }
  const out: Cause[] = [];
  if (!same(JSON.parse(JSON.stringify(spec)), JSON.parse(JSON.stringify(was)))) out.push(forbidden('spec', IMMUTABLE));
  const size = quantityValue(obj.spec?.resources?.requests?.storage);
  const before = quantityValue(old.spec?.resources?.requests?.storage);
  if (size !== undefined && before !== undefined && size < before) {
    out.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
  }
  return out;
}

export const pvcStrategy: ResourceStrategy<PersistentVolumeClaim> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    obj.spec ??= {};
    obj.spec.volumeMode ??= 'Filesystem';
    obj.status = { phase: 'Pending' };
  },
  validate(obj) {
    const out = validateResources(obj.spec?.resources, 'spec.resources');
    if (obj.spec?.resources?.requests?.storage === undefined && !obj.spec?.dataSource)
      out.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.resources[storage]' });
    if (!Array.isArray(obj.spec?.accessModes) || obj.spec.accessModes.length === 0)
      out.push({
        reason: 'FieldValueRequired',
        message: 'Required value: at least 1 access mode is required',
        field: 'spec.accessModes',
      });
    return out;
  },
  validateUpdate: validatePVCUpdate,
};

import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import type { StatusCause } from '../../api/status.js';

const FORBIDDEN = 'field is immutable when `immutable` is set';

/** ConfigMaps and Secrets: `immutable: true` freezes data, binaryData (and type) and itself. */
export const immutableDataStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    if (obj.kind === 'Secret' && !obj.type) obj.type = 'Opaque';
  },
  validateUpdate(obj, old) {
    const causes: StatusCause[] = [];
    if (old.immutable !== true) return causes;
    for (const f of ['data', 'binaryData', 'stringData']) {
      if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) {
        causes.push({ reason: 'FieldValueForbidden', message: `Forbidden: ${FORBIDDEN}`, field: f });
      }
    }
    if (obj.immutable !== true) {
      causes.push({ reason: 'FieldValueForbidden', message: `Forbidden: ${FORBIDDEN}`, field: 'immutable' });
    }
    return causes;
  },
};

import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import type { StatusCause } from '../../api/status.js';

const FORBIDDEN = 'field is immutable when `immutable` is set';

/** ConfigMaps and Secrets: `immutable: true` freezes data, binaryData (and type) and itself. */
export const immutableDataStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    if (obj.kind !== 'Secret') return;
    obj.type ||= 'Opaque';
    foldStringData(obj);
  },
  prepareForUpdate(obj) {
    if (obj.kind === 'Secret') foldStringData(obj);
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

/** Secrets: stringData is write-only; its entries are base64-encoded into data and it is dropped. */
function foldStringData(obj: any): void {
  if (!obj.stringData || typeof obj.stringData !== 'object') return;
  obj.data = { ...(obj.data ?? {}) };
  for (const [k, v] of Object.entries(obj.stringData)) obj.data[k] = Buffer.from(String(v)).toString('base64');
  delete obj.stringData;
}

import type { DataObject } from '../../api/kinds.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import type { StatusCause } from '../../api/status.js';
import { invalid } from './field-errors.js';
import { setOwn } from '../../api/own-keys.js';

const FORBIDDEN = 'field is immutable when `immutable` is set';

/** ConfigMaps and Secrets: keys are config keys; `immutable: true` freezes data, binaryData (and type) and itself. */
export const immutableDataStrategy: ResourceStrategy<DataObject> = {
  ...DEFAULT_STRATEGY,
  prepareForCreate(obj) {
    if (obj.kind !== 'Secret') return;
    obj.type ||= 'Opaque';
    foldStringData(obj);
  },
  prepareForUpdate(obj) {
    if (obj.kind === 'Secret') foldStringData(obj);
  },
  validate(obj) {
    return validateDataKeys(obj);
  },
  validateUpdate(obj, old) {
    const causes: StatusCause[] = [];
    if (old.immutable !== true) return causes;
    for (const f of ['data', 'binaryData', 'stringData'] as const) {
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
function foldStringData(obj: DataObject): void {
  if (!obj.stringData || typeof obj.stringData !== 'object') return;
  const data: Record<string, unknown> = { ...(obj.data ?? {}) };
  obj.data = data;
  for (const [k, v] of Object.entries(obj.stringData)) setOwn(data, k, Buffer.from(String(v)).toString('base64'));
  delete obj.stringData;
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/**
 * upstream validation.IsConfigMapKey: a key that is a file name in a volume, so never a path
 * (`a/b`), never `.`/`..` or anything starting with `..`, at most 253 characters.
 */
export function configMapKeyErrors(key: string): string[] {
  const out: string[] = [];
  if (key.length > 253) out.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) out.push(CONFIG_KEY_MESSAGE);
  if (key === '.') out.push("must not be '.'");
  else if (key === '..') out.push("must not be '..'");
  else if (key.startsWith('..')) out.push("must not start with '..'");
  return out;
}

/**
 * upstream ValidateConfigMap / ValidateSecret: every key of data and binaryData (Secrets: data,
 * stringData already folded in) is a config key; a ConfigMap key may not be in both maps.
 */
function validateDataKeys(obj: DataObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const maps = obj.kind === 'Secret' ? (['data'] as const) : (['data', 'binaryData'] as const);
  const binary = obj.binaryData;
  for (const field of maps) {
    const m = obj[field];
    if (!m || typeof m !== 'object') continue;
    for (const key of Object.keys(m)) {
      for (const msg of configMapKeyErrors(key)) causes.push(invalid(`${field}[${key}]`, key, msg));
      if (
        field === 'data' &&
        obj.kind !== 'Secret' &&
        binary &&
        typeof binary === 'object' &&
        Object.hasOwn(binary, key)
      ) {
        causes.push(invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
      }
    }
  }
  return causes;
}

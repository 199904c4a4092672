/** Name and metadata syntax rules shared by every kind (upstream apimachinery validation). */
import type { StatusCause } from '../api/status.js';
import type { ObjectMeta } from '../api/object.js';
import type { NameRule } from './strategy.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function nameErrors(name: string, rule: NameRule): string[] {
  if (rule === 'path') {
    if (name === '.' || name === '..') return [`may not be '${name}'`];
    // a name must be addressable in a URL: well-formed UTF-16 (no lone surrogates), no NUL
    if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\u0000/.test(name))
      return ['may not contain a lone surrogate or NUL'];
    // the storage key must fit the backend (LMDB keys are at most 1978 bytes)
    if (Buffer.byteLength(name) > 1024) return ['must be no more than 1024 bytes'];
    if (name.includes('/') || name.includes('%')) return [`may not contain '/'`];
    return [];
  }
  if (rule === 'label') {
    const out: string[] = [];
    if (name.length > 63) out.push('must be no more than 63 characters');
    if (!DNS1123_LABEL.test(name))
      out.push(
        `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      );
    return out;
  }
  const out: string[] = [];
  if (name.length > 253) out.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(name))
    out.push(
      `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    );
  return out;
}

function keyErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) return ['a qualified name must consist of alphanumeric characters'];
  const name = parts[parts.length - 1]!;
  const out: string[] = [];
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (!prefix || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))
      out.push('prefix part must be a lowercase RFC 1123 subdomain');
  }
  if (!name || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    out.push(
      `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
  return out;
}

/** Validates ObjectMeta fields every kind shares; returns causes with field paths. */
export function metadataCauses(meta: ObjectMeta, rule: NameRule): StatusCause[] {
  const causes: StatusCause[] = [];
  const bad = (field: string, value: unknown, message: string) =>
    causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${message}`, field });
  if (!meta.name) {
    causes.push({
      reason: 'FieldValueRequired',
      message: 'Required value: name or generateName is required',
      field: 'metadata.name',
    });
  } else {
    for (const m of nameErrors(meta.name, rule)) bad('metadata.name', meta.name, m);
  }
  for (const [k, v] of Object.entries(meta.labels ?? {})) {
    for (const m of keyErrors(k)) bad('metadata.labels', k, m);
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) {
      bad(
        `metadata.labels`,
        v,
        `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      );
    }
  }
  let annotationBytes = 0;
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    for (const m of keyErrors(k)) bad('metadata.annotations', k, m);
    annotationBytes += k.length + String(v).length;
  }
  if (annotationBytes > 256 * 1024) {
    causes.push({
      reason: 'FieldValueTooLong',
      message: 'Too long: must have at most 262144 bytes',
      field: 'metadata.annotations',
    });
  }
  return causes;
}

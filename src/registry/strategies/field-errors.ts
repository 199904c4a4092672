/**
 * Constructors for validation causes with upstream's wording (apimachinery field.Error):
 * `<field>: Required value`, `Invalid value: <v>: <detail>`, `Duplicate value: <v>`,
 * `Unsupported value: <v>: supported values: "a", "b"`, `Forbidden: <detail>`.
 */
import type { StatusCause } from '../../api/status.js';

export type Cause = StatusCause;

/** Renders a value the way upstream's messages show it (Go %q / %#v for the common shapes). */
export function goValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === undefined || v === null) return 'null';
  if (Array.isArray(v) && v.every((x) => typeof x === 'string'))
    return `[]string{${v.map((x) => JSON.stringify(x)).join(', ')}}`;
  if (typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string')) {
    const keys = Object.keys(v).sort();
    return `map[string]string{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify((v as Record<string, string>)[k])}`).join(', ')}}`;
  }
  return JSON.stringify(v);
}

export const required = (field: string, detail = ''): Cause => ({
  reason: 'FieldValueRequired',
  message: detail ? `Required value: ${detail}` : 'Required value',
  field,
});

export const invalid = (field: string, value: unknown, detail: string): Cause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${goValue(value)}: ${detail}`,
  field,
});

export const duplicate = (field: string, value: unknown): Cause => ({
  reason: 'FieldValueDuplicate',
  message: `Duplicate value: ${goValue(value)}`,
  field,
});

export const notSupported = (field: string, value: unknown, supported: readonly string[]): Cause => ({
  reason: 'FieldValueNotSupported',
  message: `Unsupported value: ${goValue(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  field,
});

export const forbidden = (field: string, detail: string): Cause => ({
  reason: 'FieldValueForbidden',
  message: `Forbidden: ${detail}`,
  field,
});

/** apimachinery ValidateImmutableField: a cause when the value changed. */
export function immutable(field: string, value: unknown, old: unknown): Cause[] {
  return same(value, old) ? [] : [invalid(field, value ?? null, 'field is immutable')];
}

/** Semantic equality of JSON values (key order does not matter). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export const LABEL_MESSAGE = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;
export const SUBDOMAIN_MESSAGE = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
const DNS1035_MESSAGE = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`;

/** A name checked against a length limit and a pattern: a cause for each it breaks. */
function nameCauses(field: string, v: unknown, max: number, pattern: RegExp, message: string): Cause[] {
  const s = String(v);
  const out: Cause[] = [];
  if (s.length > max) out.push(invalid(field, s, `must be no more than ${max} characters`));
  if (!pattern.test(s)) out.push(invalid(field, s, message));
  return out;
}

/** IsDNS1123Label as causes on field. */
export function dnsLabel(field: string, v: unknown): Cause[] {
  return nameCauses(field, v, 63, DNS1123_LABEL, LABEL_MESSAGE);
}

/** IsDNS1123Subdomain as causes on field. */
export function dnsSubdomain(field: string, v: unknown): Cause[] {
  return nameCauses(field, v, 253, DNS1123_SUBDOMAIN, SUBDOMAIN_MESSAGE);
}

/** IsDNS1035Label as causes on field. */
export function dns1035Label(field: string, v: unknown): Cause[] {
  return nameCauses(field, v, 63, DNS1035_LABEL, DNS1035_MESSAGE);
}

/** IsValidPortNum */
export function portNumber(field: string, v: unknown): Cause[] {
  return Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535
    ? []
    : [invalid(field, v ?? 0, 'must be between 1 and 65535, inclusive')];
}

const IANA_SVC_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** ValidatePortNumOrName: an int port, or an IANA service name (at most 15 chars, a letter). */
export function portNumOrName(field: string, v: unknown): Cause[] {
  if (typeof v === 'number') return portNumber(field, v);
  const s = String(v);
  if (s.length > 15) return [invalid(field, s, 'must be no more than 15 characters')];
  if (!IANA_SVC_NAME.test(s) || s.includes('--'))
    return [invalid(field, s, `must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`)];
  if (!/[a-z]/.test(s)) return [invalid(field, s, 'must contain at least one letter (a-z)')];
  return [];
}

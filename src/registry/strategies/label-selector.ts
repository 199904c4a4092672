/** metav1.LabelSelector validation and the selector-matches-template rule of the workload kinds. */
import type { KubeObject } from '../../api/object.js';
import { labelSelectorFromObject, type LabelSelectorObject } from '../../api/selectors.js';
import { forbidden, invalid, required, type Cause } from './field-errors.js';

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const KEY_MESSAGE = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`;
const VALUE_MESSAGE = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`;

export function labelKey(field: string, key: string): Cause[] {
  const parts = key.split('/');
  const name = parts[parts.length - 1]!;
  const prefixBad =
    parts.length > 2 || (parts.length === 2 && (!parts[0] || parts[0].length > 253 || !PREFIX.test(parts[0])));
  if (prefixBad) return [invalid(field, key, 'prefix part must be a lowercase RFC 1123 subdomain')];
  if (!name || name.length > 63 || !QUALIFIED_NAME.test(name)) return [invalid(field, key, KEY_MESSAGE)];
  return [];
}

export function labelValue(field: string, value: unknown): Cause[] {
  return typeof value === 'string' && value.length <= 63 && LABEL_VALUE.test(value)
    ? []
    : [invalid(field, value, VALUE_MESSAGE)];
}

/** ValidateLabelSelector: keys and values, operators, values present exactly for In/NotIn. */
export function validateLabelSelector(sel: LabelSelectorObject | null | undefined, path: string): Cause[] {
  if (sel == null) return [];
  const out: Cause[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    out.push(...labelKey(`${path}.matchLabels`, k), ...labelValue(`${path}.matchLabels`, v));
  }
  (sel.matchExpressions ?? []).forEach((e, i: number) => {
    const p = `${path}.matchExpressions[${i}]`;
    const n = Array.isArray(e?.values) ? e.values.length : 0;
    if (e?.operator === 'In' || e?.operator === 'NotIn') {
      if (n === 0) out.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (e?.operator === 'Exists' || e?.operator === 'DoesNotExist') {
      if (n > 0)
        out.push(forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      out.push(invalid(`${p}.operator`, e?.operator ?? '', 'not a valid selector operator'));
    }
    out.push(...labelKey(`${p}.key`, String(e?.key ?? '')));
  });
  return out;
}

/** A non-empty selector must select the template's labels (ValidatePodTemplateSpecForReplicaSet). */
export function selectorMatchesTemplate(
  sel: LabelSelectorObject | null | undefined,
  template: KubeObject | undefined,
  path: string,
): Cause[] {
  if (sel == null) return [];
  let selector: ReturnType<typeof labelSelectorFromObject>;
  try {
    selector = labelSelectorFromObject(sel);
  } catch {
    return [invalid(path.replace(/template$/, 'selector'), sel, 'invalid label selector')];
  }
  const labels = template?.metadata?.labels ?? {};
  if (selector.empty || selector.matches(labels)) return [];
  return [invalid(`${path}.metadata.labels`, labels, '`selector` does not match template `labels`')];
}

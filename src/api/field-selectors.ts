/**
 * Field selectors, ported from k8s.io/apimachinery (fields/selector.go), and the per-kind field
 * label conversion funcs of kube-apiserver v1.32: which field labels each kind accepts, their
 * aliases, and the selectable field set of an object. Parsed once into requirement arrays;
 * `matches` only loops over them. Label selectors are in selectors.ts.
 */
import { fieldAt, isRecord, type KubeObject } from './object.js';
import { SelectorError, byteOrder } from './selectors.js';

export interface FieldRequirement {
  readonly field: string;
  readonly op: '=' | '!=';
  readonly value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  matches(fields: Record<string, string>): boolean; // a missing field reads as "" (upstream fields.Set.Get)
  fieldNames(): string[]; // distinct, in requirement order
  requiresExactMatch(field: string): string | undefined; // value of a `field=value` requirement
  toString(): string;
}

const escapeValue = (v: string) => v.replace(/[\\,=]/g, (c) => `\\${c}`);

class CompiledFieldSelector implements FieldSelector {
  readonly empty: boolean;
  constructor(readonly requirements: readonly FieldRequirement[]) {
    this.empty = requirements.length === 0;
  }
  matches(fields: Record<string, string>): boolean {
    const reqs = this.requirements;
    for (let i = 0; i < reqs.length; i++) {
      const r = reqs[i]!;
      const v = fields != null && Object.hasOwn(fields, r.field) ? fields[r.field] : '';
      if ((v === r.value) !== (r.op === '=')) return false;
    }
    return true;
  }
  fieldNames(): string[] {
    return [...new Set(this.requirements.map((r) => r.field))];
  }
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.op === '=')?.value;
  }
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.op}${escapeValue(r.value)}`).join(',');
  }
}

/** fields.UnescapeValue */
function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '',
    inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=')
        throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=')
      throw new SelectorError(`invalid field selector: unescaped character in value: '${c}'`);
    else out += c;
  }
  if (inSlash) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** fields.ParseSelector: comma-separated `f=v`, `f==v`, `f!=v`; `\,` `\=` `\\` escapes in values. */
export function parseFieldSelector(s: string): FieldSelector {
  const terms: string[] = [];
  let start = 0,
    inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  if (s.length > 0) terms.push(s.slice(start));
  terms.sort(byteOrder);
  const reqs: FieldRequirement[] = [];
  for (const term of terms) {
    if (term === '') continue;
    const m = /!=|==|=/.exec(term); // first operator occurrence; `!=` and `==` win at the same index
    if (!m) throw new SelectorError(`invalid selector: '${s}'; can't understand '${term}'`);
    const value = unescapeValue(term.slice(m.index + m[0].length));
    reqs.push({ field: term.slice(0, m.index), op: m[0] === '!=' ? '!=' : '=', value });
  }
  return new CompiledFieldSelector(reqs);
}

/** The name when the selector is exactly `metadata.name=<x>` (or `==`), else undefined. */
export function singleNameValue(sel: FieldSelector): string | undefined {
  const r = sel.requirements;
  return r.length === 1 && r[0]!.field === 'metadata.name' && r[0]!.op === '=' ? r[0]!.value : undefined;
}

// ---------------------------------------------------------------- per-kind selectable fields

const NAME_NS = ['metadata.name', 'metadata.namespace'] as const;

/** Fields every kind without its own conversion func accepts (runtime.DefaultMetaV1FieldSelectorConversion). */
export const DEFAULT_SELECTABLE_FIELDS: readonly string[] = NAME_NS;

/** Kinds with their own upstream field label conversion func -> every label it accepts. Others: DEFAULT_SELECTABLE_FIELDS. */
export const SELECTABLE_FIELDS: Record<string, readonly string[]> = {
  Pod: [
    ...NAME_NS,
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.podIPs',
    'status.nominatedNodeName',
    'spec.host',
  ],
  Node: ['metadata.name', 'spec.unschedulable'],
  ReplicationController: [...NAME_NS, 'status.replicas'],
  ReplicaSet: [...NAME_NS, 'status.replicas'],
  Event: [
    ...NAME_NS,
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  Namespace: ['metadata.name', 'status.phase'],
  Secret: [...NAME_NS, 'type'],
  Service: [...NAME_NS, 'spec.clusterIP', 'spec.type'],
  Job: [...NAME_NS, 'status.successful'],
  CertificateSigningRequest: ['metadata.name', 'spec.signerName'],
};

/** Labels upstream's conversion funcs rename before matching. */
const FIELD_ALIASES: Record<string, Record<string, string>> = { Pod: { 'spec.host': 'spec.nodeName' } };

/** The selector with its field labels renamed (a converted version's labels to the stored ones). */
export function renameFields(sel: FieldSelector, names: Readonly<Record<string, string>>): FieldSelector {
  return new CompiledFieldSelector(sel.requirements.map((r) => ({ ...r, field: names[r.field] ?? r.field })));
}

export function selectableFieldsFor(kind: string): readonly string[] {
  return Object.hasOwn(SELECTABLE_FIELDS, kind) ? SELECTABLE_FIELDS[kind]! : DEFAULT_SELECTABLE_FIELDS;
}

/**
 * Rejects field labels not in `allowed` and returns the selector with upstream aliases applied
 * (Pod `spec.host` → `spec.nodeName`). Message: `field label not supported: <f>` for kinds with a
 * conversion func (and custom resources); built-in kinds without one get upstream's default message.
 */
export function validateFieldSelector(
  sel: FieldSelector,
  allowed: readonly string[],
  kind: string,
  opts: { customResource?: boolean } = {},
): FieldSelector {
  for (const r of sel.requirements) {
    if (allowed.includes(r.field)) continue;
    if (opts.customResource || Object.hasOwn(SELECTABLE_FIELDS, kind))
      throw new SelectorError(`field label not supported: ${r.field}`);
    throw new SelectorError(
      `${JSON.stringify(r.field)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
    );
  }
  const aliases = Object.hasOwn(FIELD_ALIASES, kind) ? FIELD_ALIASES[kind]! : undefined;
  if (!aliases || !sel.requirements.some((r) => Object.hasOwn(aliases, r.field))) return sel;
  return new CompiledFieldSelector(
    sel.requirements.map((r) => (Object.hasOwn(aliases, r.field) ? { ...r, field: aliases[r.field]! } : r)),
  );
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown): string => (typeof v === 'number' && Number.isFinite(v) ? String(Math.trunc(v)) : '0');
const bool = (v: unknown): string => String(v === true);

/** A part of an object whose fields are read one by one: {} when absent or not an object. */
const recordOr = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

/** The selectable field set of an object (v1 JSON form), as upstream's *ToSelectableFields. */
export function fieldSetFor(kind: string, obj: unknown): Record<string, string> {
  const meta = recordOr(fieldAt(obj, 'metadata')),
    spec = recordOr(fieldAt(obj, 'spec')),
    status = recordOr(fieldAt(obj, 'status'));
  const f: Record<string, string> = { 'metadata.name': str(meta.name) };
  if (kind !== 'Node' && kind !== 'Namespace' && kind !== 'CertificateSigningRequest')
    f['metadata.namespace'] = str(meta.namespace);
  switch (kind) {
    case 'Pod':
      for (const k of ['nodeName', 'restartPolicy', 'schedulerName', 'serviceAccountName'])
        f[`spec.${k}`] = str(spec[k]);
      f['spec.hostNetwork'] = bool(spec.hostNetwork);
      f['status.phase'] = str(status.phase);
      f['status.podIP'] =
        Array.isArray(status.podIPs) && status.podIPs.length > 0 ? str(status.podIPs[0]?.ip) : str(status.podIP);
      f['status.nominatedNodeName'] = str(status.nominatedNodeName);
      break;
    case 'Node':
      f['spec.unschedulable'] = bool(spec.unschedulable);
      break;
    case 'ReplicationController':
    case 'ReplicaSet':
      f['status.replicas'] = int(status.replicas);
      break;
    case 'Namespace':
      f['status.phase'] = str(status.phase);
      break;
    case 'Secret':
      f['type'] = str(fieldAt(obj, 'type'));
      break;
    case 'Service':
      f['spec.clusterIP'] = str(spec.clusterIP);
      f['spec.type'] = str(spec.type);
      break;
    case 'Job':
      f['status.successful'] = int(status.succeeded);
      break;
    case 'CertificateSigningRequest':
      f['spec.signerName'] = str(spec.signerName);
      break;
    case 'Event': {
      const io = recordOr(fieldAt(obj, 'involvedObject'));
      for (const k of ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'])
        f[`involvedObject.${k}`] = str(io[k]);
      for (const k of ['reason', 'reportingComponent', 'type']) f[k] = str(fieldAt(obj, k));
      f['source'] = str(fieldAt(obj, 'source', 'component')) || str(fieldAt(obj, 'reportingComponent'));
      break;
    }
  }
  return f;
}

/**
 * The selectable field set of a custom resource: metadata.name (and namespace), and each of
 * the CRD's selectableFields (`spec.color`) as text: strings as they are, integers and booleans
 * formatted, absent values as "" (upstream customresource GetAttrs).
 */
export function customFieldSet(
  obj: KubeObject | undefined,
  paths: readonly string[],
  namespaced: boolean,
): Record<string, string> {
  const f: Record<string, string> = { 'metadata.name': str(obj?.metadata?.name) };
  if (namespaced) f['metadata.namespace'] = str(obj?.metadata?.namespace);
  for (const p of paths) {
    let v: unknown = obj;
    for (const k of p.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    f[p] = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
  }
  return f;
}

/**
 * Field ownership: managedFields records per (manager, operation, apiVersion, subresource),
 * updated by apply (conflict detection, force, removal of fields an applier gave up) and by
 * every other write (the writer takes the fields it changed). Only FieldSet algebra here.
 */
import { errors, type StatusCause } from '../api/status.js';
import type { SchemaNode } from '../schema/schema.js';
import { FieldSet, fieldsOf, removeAt, valueAt, type Path } from './fieldset.js';
import { mergeApplied } from './merge.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, any>;
  subresource?: string;
}

interface Owner { entry: ManagedFieldsEntry; set: FieldSet }

const IGNORED = new Set(['f:apiVersion', 'f:kind']);
const IGNORED_META = new Set(['f:name', 'f:namespace', 'f:uid', 'f:resourceVersion', 'f:generation', 'f:creationTimestamp', 'f:managedFields', 'f:deletionTimestamp', 'f:deletionGracePeriodSeconds', 'f:selfLink']);

/** The fields of an object that ownership tracks (not identity, not status-by-default). */
export function trackedFields(obj: unknown, schema: SchemaNode | undefined): FieldSet {
  const all = fieldsOf(obj, schema);
  return new FieldSet(all.paths().filter((p) => !IGNORED.has(p[0]!) && !(p[0] === 'f:metadata' && (p.length === 1 || IGNORED_META.has(p[1]!)))).map((p) => p.join('\u0001')));
}

function owners(obj: any): Owner[] {
  const list = Array.isArray(obj?.metadata?.managedFields) ? obj.metadata.managedFields as ManagedFieldsEntry[] : [];
  return list.filter((e) => e && typeof e.manager === 'string').map((entry) => ({ entry, set: FieldSet.fromFieldsV1(entry.fieldsV1) }));
}

function write(obj: any, list: Owner[]): void {
  const entries = list.filter((o) => !o.set.empty()).map((o) => ({ ...o.entry, fieldsV1: o.set.toFieldsV1() }));
  if (entries.length) obj.metadata.managedFields = entries; else delete obj.metadata.managedFields;
}

function same(a: ManagedFieldsEntry, manager: string, op: string, apiVersion: string, sub?: string): boolean {
  return a.manager === manager && a.operation === op && a.apiVersion === apiVersion && (a.subresource ?? '') === (sub ?? '');
}

function entry(manager: string, operation: 'Apply' | 'Update', apiVersion: string, now: string, sub?: string): ManagedFieldsEntry {
  const e: ManagedFieldsEntry = { manager, operation, apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: {} };
  if (sub) e.subresource = sub;
  return e;
}

/**
 * After a non-apply write: the writer owns every field it added or changed, other managers
 * lose those, and removed fields leave every set. A `[{}]` managedFields in the request resets.
 */
export function recordUpdate(next: any, old: any | undefined, schema: SchemaNode | undefined, manager: string, apiVersion: string, now: string, sub?: string): void {
  const requested = next.metadata.managedFields;
  if (Array.isArray(requested) && requested.length === 1 && Object.keys(requested[0] ?? {}).length === 0) {
    delete next.metadata.managedFields;
    old = undefined;
  } else if (old) next.metadata.managedFields = old.metadata?.managedFields;
  const before = old ? trackedFields(old, schema) : new FieldSet();
  const after = trackedFields(next, schema);
  // a member is changed when it is new, or when it is a leaf whose value differs; a map or list
  // item whose children changed stays with its owner (the children move)
  const changed = new FieldSet(after.paths().filter((p) => !before.has(p)
    || (!isInterior(valueAt(next, p)) && JSON.stringify(valueAt(old, p)) !== JSON.stringify(valueAt(next, p)))).map((p) => p.join('\u0001')));
  const list = owners(next).map((o) => ({ ...o, set: o.set.difference(changed).intersection(after) }));
  let mine = list.find((o) => same(o.entry, manager, 'Update', apiVersion, sub));
  if (!mine) list.push(mine = { entry: entry(manager, 'Update', apiVersion, now, sub), set: new FieldSet() });
  if (!changed.empty()) { mine.entry = { ...mine.entry, time: now }; mine.set = mine.set.union(changed); }
  write(next, list);
}

/**
 * Server-side apply of `applied` onto `live` by `manager`: conflicts with other owners whose
 * values differ (unless force), merge, then drop fields this applier owned before and no
 * longer applies when nobody else owns them.
 */
export function apply(live: any | undefined, applied: any, schema: SchemaNode | undefined, manager: string, apiVersion: string, now: string, force: boolean, target: { kind: string; group: string; name: string }): any {
  if (applied.metadata?.managedFields !== undefined) {
    throw errors.badRequest('metadata.managedFields must be nil');
  }
  const base = live ? structuredClone(live) : { metadata: {} };
  const list = owners(base);
  const appliedSet = trackedFields(applied, schema);
  const conflicts: StatusCause[] = [];
  for (const o of list) {
    if (same(o.entry, manager, 'Apply', apiVersion)) continue;
    for (const p of o.set.intersection(appliedSet).paths()) {
      if (JSON.stringify(valueAt(base, p)) === JSON.stringify(valueAt(applied, p))) continue;
      if (isInterior(valueAt(applied, p))) continue;
      conflicts.push({ reason: 'FieldManagerConflict', message: `conflict with "${o.entry.manager}"${o.entry.operation === 'Update' ? ' using ' + o.entry.apiVersion : ''}`, field: dotted(p) });
      if (force) o.set = o.set.difference(FieldSet.of([p]));
    }
  }
  if (conflicts.length && !force) {
    const n = conflicts.length;
    const msg = `Apply failed with ${n} conflict${n > 1 ? 's' : ''}: ${conflicts.map((c) => `${c.message}: ${c.field}`).join('\n')}`;
    throw errors.applyConflict(msg, { ...target, causes: conflicts });
  }
  const prev = list.find((o) => same(o.entry, manager, 'Apply', apiVersion));
  const merged = mergeApplied(base, applied, schema);
  if (prev) {
    const othersSet = list.filter((o) => o !== prev).reduce((acc, o) => acc.union(o.set), new FieldSet());
    const dropped = prev.set.difference(appliedSet).difference(othersSet);
    for (const p of dropped.paths().sort((a, b) => b.length - a.length)) removeAt(merged, p);
  }
  const rest = list.filter((o) => o !== prev);
  rest.push({ entry: entry(manager, 'Apply', apiVersion, now), set: appliedSet });
  merged.metadata ??= {};
  write(merged, rest);
  return merged;
}

function isInterior(v: unknown): boolean {
  return !!v && typeof v === 'object' && Object.keys(v).length > 0;
}

function dotted(p: Path): string {
  return p.map((e) => e.startsWith('f:') ? '.' + e.slice(2) : `[${e.slice(2)}]`).join('');
}

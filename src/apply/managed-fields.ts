/**
 * Field ownership: managedFields records per (manager, operation, apiVersion, subresource),
 * updated by apply (conflict detection, force, removal of fields an applier gave up) and by
 * every other write (the writer takes the fields it changed). Only FieldSet algebra here.
 */
import type { KubeObject } from '../api/object.js';
import { errors, type StatusCause } from '../api/status.js';
import type { SchemaNode } from '../schema/schema.js';
import { FieldSet, isObj, ownPath, withItemElements, pathString, removeAt, valueAt, type Path } from './fieldset.js';
import { addedPaths, compareTracked, type Comparison } from './compare.js';
import { mergeApplied } from './merge.js';
import { mergeTracked, type TrackedMerge } from './merge-tracked.js';
import { refuseRepeats } from './typed-patch.js';
import { appliedFieldSet, IGNORED_META_NAMES } from './tracked-paths.js';
import { conflictsAllowedByLastApplied, MIGRATING_MANAGER, syncLastApplied } from './last-applied.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** rendered: the entry's fieldsV1 as long as `set` is still the set parsed from it */
interface Owner {
  entry: ManagedFieldsEntry;
  set: FieldSet;
  rendered?: { set: FieldSet; fieldsV1: Record<string, unknown> };
}

/** what a write of the main resource never tracks, for addedPaths (the same rules as tracked()) */
const UNTRACKED_TOP = new Set(['apiVersion', 'kind', 'status']);
const UNTRACKED_META = { field: 'metadata', skip: IGNORED_META_NAMES };

function trackedComparison(before: unknown, after: unknown, schema: SchemaNode | undefined, sub?: string): Comparison {
  // a create of the main resource: only what is tracked is walked, no comparison to filter
  const created = before === undefined && !sub ? addedPaths(after, schema, UNTRACKED_TOP, UNTRACKED_META) : undefined;
  if (created) return { added: created, modified: new FieldSet(), removed: new FieldSet() };
  return compareTracked(before ?? {}, after, schema, sub);
}

/** A decodable entry; anything else in a request falls back to the stored entries, as upstream. */
function validEntry(e: unknown): e is ManagedFieldsEntry {
  return (
    isObj(e) &&
    typeof e.manager === 'string' &&
    (e.operation === 'Apply' || e.operation === 'Update') &&
    (e.fieldsV1 === undefined || validFieldsV1(e.fieldsV1))
  );
}

function validFieldsV1(node: unknown): boolean {
  if (!isObj(node)) return false;
  return Object.entries(node).every(([k, child]) => {
    if (k === '.') return isObj(child);
    if (k.startsWith('f:')) return validFieldsV1(child);
    if (k.startsWith('i:')) return /^i:(0|[1-9][0-9]*)$/.test(k) && validFieldsV1(child);
    if (!k.startsWith('k:') && !k.startsWith('v:')) return false;
    try {
      const v = JSON.parse(k.slice(2));
      return (k[0] === 'v' || isObj(v)) && validFieldsV1(child);
    } catch {
      return false;
    }
  });
}

/**
 * The set each stored fieldsV1 tree stands for, per tree object: a stored object is never
 * changed in place, and the entry of a manager whose set a write leaves alone keeps its tree
 * object (write() reuses it), so each object version's sets are parsed once, not per write.
 * FieldSets are values (the algebra returns new sets), so one may be shared.
 */
const parsedSets = new WeakMap<object, FieldSet>();

function storedSet(fieldsV1: Record<string, unknown> | undefined): FieldSet {
  if (!fieldsV1 || typeof fieldsV1 !== 'object') return FieldSet.fromFieldsV1(fieldsV1);
  let set = parsedSets.get(fieldsV1);
  if (!set) parsedSets.set(fieldsV1, (set = FieldSet.fromFieldsV1(fieldsV1)));
  return set;
}

/**
 * Rendered trees by set, for the objects written with one shape (every create of one client's
 * template renders the same tree): a tree is never changed once written, so objects may share
 * it. Bounded: small sets only, and the memo starts over when full.
 */
const renderedTrees = new Map<string, Record<string, unknown>>();
const MAX_RENDERED = 512;
const MAX_SIGNATURE = 4096;

function render(set: FieldSet): Record<string, unknown> {
  const key = set.size <= 64 ? set.signature() : undefined;
  let tree = key !== undefined && key.length <= MAX_SIGNATURE ? renderedTrees.get(key) : undefined;
  if (tree) return tree;
  tree = set.toFieldsV1();
  parsedSets.set(tree, set);
  if (key !== undefined && key.length <= MAX_SIGNATURE) {
    if (renderedTrees.size >= MAX_RENDERED) renderedTrees.clear();
    renderedTrees.set(key, tree);
  }
  return tree;
}

/** trusted: entries this server stored (already checked when written), not ones from a request. */
function owners(list: unknown, trusted = false): Owner[] {
  if (!Array.isArray(list)) return [];
  return (trusted ? list : list.filter(validEntry)).map((entry: ManagedFieldsEntry) => {
    const set = trusted ? storedSet(entry.fieldsV1) : FieldSet.fromFieldsV1(entry.fieldsV1);
    return {
      entry: { ...entry },
      set,
      rendered: trusted && entry.fieldsV1 ? { set, fieldsV1: entry.fieldsV1 } : undefined,
    };
  });
}

const isReset = (v: unknown): boolean =>
  Array.isArray(v) && v.length === 1 && !!v[0] && typeof v[0] === 'object' && Object.keys(v[0]).length === 0;

/** Upstream order: Apply before Update, then by time, manager, apiVersion, subresource. */
export function order(a: ManagedFieldsEntry, b: ManagedFieldsEntry): number {
  if (a.operation !== b.operation) return a.operation < b.operation ? -1 : 1;
  for (const k of ['time', 'manager', 'apiVersion', 'subresource'] as const) {
    const x = a[k] ?? '';
    const y = b[k] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * Sorts list in place as list.sort(cmp) does (stable), by insertion for the few entries of an
 * object's managedFields: V8's sort allocates ≈ 1 KB of working state per call, even for two.
 */
function sortSmall<T>(list: T[], cmp: (a: T, b: T) => number): void {
  if (list.length > 16) {
    list.sort(cmp);
    return;
  }
  for (let i = 1; i < list.length; i++) {
    const x = list[i]!;
    let j = i - 1;
    for (; j >= 0 && cmp(list[j]!, x) > 0; j--) list[j + 1] = list[j]!;
    list[j + 1] = x;
  }
}

/** Sets obj.metadata.managedFields in place (callers hold on to obj.metadata). */
function write(obj: KubeObject, list: Owner[]): void {
  obj.metadata ??= {};
  const fieldsV1 = (o: Owner) => (o.rendered?.set === o.set ? o.rendered.fieldsV1 : render(o.set));
  const entries = list
    .filter((o) => !o.set.empty())
    .map((o) => ({ ...o.entry, fieldsType: 'FieldsV1' as const, fieldsV1: fieldsV1(o) }));
  sortSmall(entries, order);
  if (entries.length) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

/** Upstream manager identity: appliers are one entry whatever the apiVersion; updaters one per version. */
function same(
  a: ManagedFieldsEntry,
  manager: string,
  op: 'Apply' | 'Update',
  apiVersion: string,
  sub?: string,
): boolean {
  return (
    a.manager === manager &&
    a.operation === op &&
    (op === 'Apply' || a.apiVersion === apiVersion) &&
    (a.subresource ?? '') === (sub ?? '')
  );
}

function entry(
  manager: string,
  operation: 'Apply' | 'Update',
  apiVersion: string,
  now: string,
  sub?: string,
): ManagedFieldsEntry {
  const e: ManagedFieldsEntry = { manager, operation, apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: {} };
  if (sub) e.subresource = sub;
  return e;
}

/** Paths another manager loses to a change: the changed ones, and anything inside a changed atomic value. */
function taken(set: FieldSet, c: Comparison): FieldSet {
  const changed = c.added.union(c.modified);
  return set.intersection(changed).union(set.descendantsOf(c.modified));
}

/**
 * After a non-apply write: the writer owns every field it added or changed, other managers
 * lose those, and removed fields leave every set. managedFields in the request replace the
 * stored ones when given (`[{}]` resets them to none first); `[]` or none keep the stored ones.
 */
export function recordUpdate(
  next: any,
  old: any | undefined,
  schema: SchemaNode | undefined,
  manager: string,
  apiVersion: string,
  now: string,
  sub?: string,
): void {
  const requested = next.metadata?.managedFields;
  const list = isReset(requested)
    ? []
    : !sub && Array.isArray(requested) && requested.length > 0 && requested.every(validEntry)
      ? owners(requested)
      : owners(old?.metadata?.managedFields, true);
  const c = trackedComparison(old, next, schema, sub);
  for (const o of list) o.set = o.set.difference(taken(o.set, c)).difference(c.removed);
  let mine = list.find((o) => same(o.entry, manager, 'Update', apiVersion, sub));
  if (!mine) list.push((mine = { entry: entry(manager, 'Update', apiVersion, now, sub), set: new FieldSet() }));
  const gained = c.added.union(c.modified);
  if (!gained.empty()) {
    mine.entry = { ...mine.entry, time: now };
    mine.set = mine.set.union(gained).difference(c.removed);
  }
  write(next, list);
}

/**
 * Server-side apply of `applied` onto `live` by `manager`: merge; drop the fields this applier
 * applied before and omits now unless someone else still owns them; then a change to a field
 * another manager owns is a conflict, unless force moves it to the applier.
 */
export function apply(...args: Parameters<typeof applyOnce>): ReturnType<typeof applyOnce> {
  // each item's key element is computed once for the walks below (typing, merge, comparison)
  return withItemElements(() => applyOnce(...args));
}

function applyOnce(
  live: any | undefined,
  applied: any,
  schema: SchemaNode | undefined,
  manager: string,
  apiVersion: string,
  now: string,
  force: boolean,
  target: { kind: string; group: string; name: string },
  sub?: string,
): any {
  if (applied.metadata?.managedFields !== undefined) throw errors.badRequest('metadata.managedFields must be nil');
  // nothing below mutates live: merge copies what it changes, prune and write copy on write
  const base = live ?? { apiVersion: applied.apiVersion, kind: applied.kind, metadata: {} };
  const { set: appliedSet, merged: result } = mergeWithSet(base, applied, schema, sub);
  const list = owners(base.metadata?.managedFields, true);
  const prev = list.find((o) => same(o.entry, manager, 'Apply', apiVersion, sub));
  const others = list.filter((o) => o !== prev);
  // a root of its own (merge answers base itself when nothing changed): prune and write copy below it
  const merged: typeof base = result === base ? { ...base } : result;
  if (prev) prune(merged, prev.set, [appliedSet, ...others.map((o) => o.set)]);
  const c = trackedComparison(base, merged, schema, sub);
  const conflicts: StatusCause[] = [];
  const conflicting: Path[] = [];
  for (const o of others) {
    const lost = taken(o.set, c);
    for (const p of lost.paths().sort(byPath)) {
      conflicts.push({
        reason: 'FieldManagerConflict',
        message: `conflict with ${describe(o.entry)}`,
        field: pathString(p),
      });
      conflicting.push(p);
    }
    o.set = o.set.difference(lost).difference(c.removed);
  }
  const migrating = manager === MIGRATING_MANAGER && conflictsAllowedByLastApplied(base, conflicting, schema);
  if (conflicts.length && !force && !migrating)
    throw errors.applyConflict(conflictMessage(conflicts), { ...target, causes: conflicts });
  if (manager === MIGRATING_MANAGER) syncLastApplied(base, merged, applied);
  const changed = !c.added.empty() || !c.modified.empty() || !c.removed.empty();
  // as upstream, the time moves only when the object changed
  const mine: Owner = {
    entry: entry(manager, 'Apply', apiVersion, changed || !prev ? now : prev.entry.time, sub),
    set: appliedSet,
  };
  if (prev?.rendered && prev.rendered.set === prev.set && prev.set.equals(appliedSet))
    mine.rendered = { set: appliedSet, fieldsV1: prev.rendered.fieldsV1 };
  others.push(mine);
  merged.metadata = { ...merged.metadata };
  write(merged, others);
  return merged;
}

/**
 * The applied configuration's tracked set and its merge onto base, in one walk where both are
 * granular objects; a repeated list key in the configuration is upstream's 500 (typed-patch.ts).
 */
function mergeWithSet(
  base: Record<string, unknown>,
  applied: unknown,
  schema: SchemaNode | undefined,
  sub: string | undefined,
): TrackedMerge {
  const repeats: string[] = [];
  const fused = mergeTracked(base, applied, schema, sub, repeats);
  if (fused) {
    refuseRepeats(applied, repeats);
    return fused;
  }
  const set = appliedFieldSet(applied, schema, sub, repeats);
  refuseRepeats(applied, repeats);
  return { set, merged: mergeApplied(base, applied, schema) as Record<string, unknown> };
}

const byPath = (a: string[], b: string[]): number => (pathString(a) < pathString(b) ? -1 : 1);

/** Removes what the applier gave up, except paths that still hold something another claim needs. */
function prune(obj: unknown, last: FieldSet, claims: FieldSet[]): void {
  let drop = last;
  for (const c of claims) drop = drop.difference(c);
  if (drop.empty()) return;
  const keep = claims.reduce((acc, c) => acc.union(c));
  const gone = drop.difference(drop.ancestorsOf(keep));
  // remove only the outermost paths: a list item is found by its key fields, which go with it
  // or, when the item stays, stay too
  for (const p of gone.difference(gone.descendantsOf(gone)).paths()) {
    if (isKeyField(p)) continue;
    ownPath(obj, p);
    removeAt(obj, p);
    dropEmptyParents(obj, p);
  }
}

function isKeyField(p: Path): boolean {
  const item = p[p.length - 2];
  return p.length > 1 && !!item?.startsWith('k:') && p[p.length - 1]!.slice(2) in JSON.parse(item.slice(2));
}

/** As upstream, a map or list left empty by a removal is removed too. */
function dropEmptyParents(obj: unknown, p: Path): void {
  for (let n = p.length - 1; n > 0; n--) {
    const v = valueAt(obj, p.slice(0, n));
    if (!(Array.isArray(v) ? v.length === 0 : isObj(v) && Object.keys(v).length === 0)) return;
    removeAt(obj, p.slice(0, n));
  }
}

/** How upstream names a manager in a conflict: `"m"`, or `"m" using v1` for an updater. */
function describe(e: ManagedFieldsEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  return e.operation === 'Update' ? `${s} using ${e.apiVersion}` : s;
}

function conflictMessage(causes: StatusCause[]): string {
  if (causes.length === 1) return `Apply failed with 1 conflict: ${causes[0]!.message}: ${causes[0]!.field}`;
  const byManager = new Map<string, string[]>();
  for (const c of causes) byManager.set(c.message!, [...(byManager.get(c.message!) ?? []), c.field!]);
  const lines = [...byManager.keys()]
    .sort()
    .flatMap((m) => [`${m.replace(/^conflict with/, 'conflicts with')}:`, ...byManager.get(m)!.map((f) => `- ${f}`)]);
  return `Apply failed with ${causes.length} conflicts: ${lines.join('\n')}`;
}

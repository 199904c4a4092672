/**
 * Turns a PATCH request into the next object: JSON patch, merge patch, strategic merge patch
 * (built-in kinds with a schema only) and server-side apply. Runs in the owning actor.
 */
import { errors, type StatusCause } from '../api/status.js';
import { shown } from './objects.js';
import { isRecord } from '../api/object.js';
import { parseJsonNoting, parseYamlNoting, type Duplicate } from '../codec/duplicates.js';
import type { PatchType } from './ops.js';
import type { SchemaNode } from '../schema/schema.js';
import { applyJsonPatch } from '../patch/json-patch.js';
import { applyMergePatch } from '../patch/merge-patch.js';
import { applyStrategicPatch } from '../patch/strategic.js';
import { apply } from '../apply/managed-fields.js';
import { goJsonSyntaxError, goValue } from '../codec/go-json.js';

export interface PatchInput {
  patchType: PatchType;
  text: string;
  force: boolean;
  fieldManager: string | undefined;
  /** the subresource written (`status`): apply records it and owns only what it may change */
  subresource?: string;
  /** filled with the patch's repeated keys (the last value is kept), for field validation */
  duplicates?: Duplicate[];
}

export interface PatchTarget {
  kind: string;
  group: string;
  apiVersion: string;
  name: string;
}

/**
 * The parsed patch. A JSON patch that does not parse is a 400 in Go's words: `error decoding
 * patch: <json error>` for JSON and merge patches, the bare error for strategic merge
 * patches (upstream's patch handler wraps only the former).
 */
function parsePatch(input: PatchInput): unknown {
  try {
    return input.patchType === 'apply'
      ? parseYamlNoting(input.text, input.duplicates)
      : parseJsonNoting(input.text, input.duplicates);
  } catch (e) {
    if (input.patchType === 'apply')
      throw errors.badRequest(`error decoding patch: ${(e as Error).message.split('\n')[0]}`);
    const why = goJsonSyntaxError(Buffer.from(input.text, 'utf8')) ?? (e as Error).message.split('\n')[0];
    throw errors.badRequest(input.patchType === 'strategic' ? why! : `error decoding patch: ${why}`);
  }
}

const PATCH_OPTIONS = { group: 'meta.plat.io', kind: 'PatchOptions', name: '' };

/** Upstream's PatchOptions validation: 422 Invalid, one cause per bad option. */
function checkOptions(input: PatchInput): void {
  const causes = [];
  if (input.patchType === 'apply' && !input.fieldManager) {
    causes.push({
      reason: 'FieldValueRequired',
      message: 'Required value: is required for apply patch',
      field: 'fieldManager',
    });
  }
  if (input.patchType !== 'apply' && input.force) {
    causes.push({
      reason: 'FieldValueForbidden',
      message: 'Forbidden: may not be specified for non-apply patch',
      field: 'force',
    });
  }
  causes.push(...fieldManagerCauses(input.fieldManager ?? ''));
  if (causes.length) throw errors.invalid(PATCH_OPTIONS, causes);
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * upstream ValidateFieldManager (Create/Update/PatchOptions): at most 128 bytes, every character
 * printable (Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols, ASCII space).
 */
export function fieldManagerCauses(fieldManager: string): StatusCause[] {
  // the usual name: printable ASCII (every one a letter, number, punctuation, symbol or space), at
  // most 128 bytes; no Unicode property test per character on every write
  if (fieldManager.length <= 128 && PRINTABLE_ASCII.test(fieldManager)) return [];
  const causes: StatusCause[] = [];
  if (Buffer.byteLength(fieldManager) > 128)
    causes.push({
      reason: 'FieldValueTooLong',
      message: 'Too long: may not be more than 128 bytes',
      field: 'fieldManager',
    });
  let pos = 0;
  for (const ch of fieldManager) {
    if (ch !== ' ' && !/^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) {
      const hex = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(fieldManager)}: invalid character U+${hex} (at position ${pos})`,
        field: 'fieldManager',
      });
    }
    pos += Buffer.byteLength(ch);
  }
  return causes;
}

/** CreateOptions / UpdateOptions: 422 Invalid when the fieldManager is not one upstream takes. */
export function checkFieldManager(kind: 'CreateOptions' | 'UpdateOptions', fieldManager: string): void {
  const causes = fieldManagerCauses(fieldManager);
  if (causes.length) throw errors.invalid({ ...PATCH_OPTIONS, kind }, causes);
}

/**
 * What a patch works on: the stored object itself, with its top level and metadata copied (the
 * store writes system metadata, resourceVersion and managedFields into the patched object's).
 * Nothing below it is copied or parsed again: every patch (json-patch.ts, merge-patch.ts,
 * strategic.ts, apply) copies what it changes and never writes into its input, and the steps
 * after it (quantities, defaulting, validation, commit) copy on write or write only into nodes
 * the patch made (test/registry/stored-immutable.test.ts freezes the stored objects of every
 * built-in kind and runs each write on them). So the next object shares the unchanged subtrees
 * with the stored one, and the no-op and generation comparisons stop at them by reference.
 * Apply reads managedFields and writes new ones, never changing them, so it reuses the field
 * sets parsed from the stored entries (src/apply/managed-fields.ts storedSet).
 * Only an object this process wrote (`own`) is shared: one loaded from storage or written by
 * another server may lack a default of this build, which update defaulting would write into a
 * shared node; those get a fresh copy, as custom resources do.
 */
export function patchBase(
  old: { json: string; own?: boolean; obj: { metadata?: { managedFields?: unknown } } },
  patchType: PatchType,
  custom: boolean,
): Record<string, unknown> {
  if (!custom && old.own) return { ...old.obj, metadata: { ...old.obj.metadata } };
  // a fresh copy for a custom resource (its CRD's schema can change under the stored objects,
  // and its pruning and defaulting would then write into nodes the patch left alone) and for an
  // object this process did not write
  const live = JSON.parse(old.json) as { metadata?: { managedFields?: unknown } };
  if (patchType === 'apply' && live.metadata?.managedFields)
    live.metadata.managedFields = old.obj.metadata?.managedFields;
  return live;
}

/** The patched object (a new value); `live` is undefined only for apply-create. */
export function patchObject(
  live: unknown | undefined,
  input: PatchInput,
  schema: SchemaNode | undefined,
  t: PatchTarget,
  now: string,
): unknown {
  checkOptions(input);
  const patch = parsePatch(input);
  switch (input.patchType) {
    case 'json':
      return applyJsonPatch(live, patch);
    case 'merge':
      if (!patch || typeof patch !== 'object' || Array.isArray(patch))
        throw errors.badRequest('merge patch must be a JSON object');
      return applyMergePatch(live, patch);
    case 'strategic':
      if (!schema) throw errors.unsupportedPatch('strategic merge patch is not supported for this resource');
      return applyStrategicPatch(live, patch, schema);
    case 'apply': {
      if (!patch || typeof patch !== 'object' || Array.isArray(patch))
        throw errors.badRequest('apply patch must be an object');
      const obj = patch as Record<string, unknown>;
      const meta = obj.metadata;
      if (meta !== undefined && meta !== null && !isRecord(meta)) throw errors.badRequest('metadata must be an object');
      if (obj.apiVersion !== t.apiVersion || obj.kind !== t.kind) {
        throw errors.badRequest(
          `the API version and kind in the patch (${shown(obj.apiVersion)}, ${shown(obj.kind)}) must match the request (${t.apiVersion}, ${t.kind})`,
        );
      }
      const name = isRecord(meta) ? meta.name : undefined;
      if (name !== undefined && name !== t.name) {
        throw errors.badRequest(
          `the name of the object (${shown(name)}) does not match the name on the URL (${t.name})`,
        );
      }
      return apply(
        live,
        obj,
        schema,
        input.fieldManager!,
        t.apiVersion,
        now,
        input.force,
        { kind: t.kind, group: t.group, name: t.name },
        input.subresource,
      );
    }
  }
}

/**
 * upstream applyPatchToObject: a strategic merge patch whose result does not convert into the
 * typed object is 422 Invalid on field `patch`, showing the patch as Go prints a map.
 */
export function strategicRestoreError(text: string, why: string): Error {
  let shownPatch: string;
  try {
    shownPatch = goValue(JSON.parse(text));
  } catch {
    shownPatch = text;
  }
  return errors.invalid({ kind: '' }, [
    { reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(shownPatch)}: ${why}`, field: 'patch' },
  ]);
}

/**
 * The limits on what the store writes (size, and depth: MAX_NESTING_DEPTH, src/schema/depth.ts),
 * and the way through for objects an older version stored deeper than it (issue 26 item 3).
 */
import { errors } from '../api/status.js';
import { recordUpdate } from '../apply/managed-fields.js';
import { DepthError, MAX_NESTING_DEPTH, checkValueDepth, exceedsDepth } from '../schema/depth.js';
import { MAX_OBJECT_BYTES } from './objects.js';

/**
 * Over the storage limit is 413. Deeper than MAX_NESTING_DEPTH is 422: bodies are checked when decoded, but a patch within the limit can put its value under a deep
 * path; as upstream, where the patched JSON fails to decode, that is 422 Invalid on field
 * `patch`. managedFields do not count: the server writes them, a few levels deeper than the
 * fields they mirror, so an object at the limit stays writable. An update of an object already
 * deeper (`old`) is let through, so that its finalizers can be removed and it can go. The
 * object walk runs only for the rare entry whose JSON text is over the limit.
 */
export function checkStorable(entry: { json: string; obj: unknown }, old?: { json: string }, openers?: number): void {
  // a JSON character is at least one byte: only long texts need counting
  if (entry.json.length > MAX_OBJECT_BYTES / 4 && Buffer.byteLength(entry.json) > MAX_OBJECT_BYTES)
    throw errors.objectTooLarge(MAX_OBJECT_BYTES);
  // `openers`: the text's `{` and `[` when its encoder counted them (it nests no deeper than that)
  if ((openers !== undefined && openers <= MAX_NESTING_DEPTH) || !exceedsDepth(entry.json)) return;
  if (old && exceedsDepth(old.json)) return;
  const obj = entry.obj as { metadata?: Record<string, unknown> };
  try {
    checkValueDepth({ ...obj, metadata: { ...obj.metadata, managedFields: undefined } });
  } catch (e) {
    if (!(e instanceof DepthError)) throw e;
    throw errors.invalid({ kind: '' }, [
      { reason: 'FieldValueInvalid', message: `Invalid value: "object": ${e.message}`, field: 'patch' },
    ]);
  }
}

/**
 * recordUpdate as upstream's UpdateNoErrors: managedFields the recursive field-set code cannot
 * walk (nested past the stack: an object stored by an older version) are cleared rather than
 * failing the write, so such an object can still be updated, e.g. to remove its finalizers.
 */
export function recordUpdateNoErrors(...args: Parameters<typeof recordUpdate>): void {
  try {
    recordUpdate(...args);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    delete (args[0] as { metadata: { managedFields?: unknown } }).metadata.managedFields;
  }
}

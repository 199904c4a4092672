/**
 * Objects of built-in kinds that passed this process's whole validation (the kind's rules and
 * the schema's required fields) when they were written. An update or patch that leaves a subtree
 * of such an object in place (the same reference: patches, apply's merge and scale writes copy
 * only what they change) need not validate that subtree again when the rule that checks it is a
 * function of the subtree alone: it passed then, so it passes now. Objects loaded from storage or
 * written without validation (status writes, deletions) are not here and are checked whole.
 * Custom resources are never marked: their schema can change under the stored objects.
 */
const passed = new WeakSet<object>();

/** Marks obj as having passed its kind's validation and the required-field check. */
export function markValidated(obj: object): void {
  passed.add(obj);
}

/** obj when it passed validation as it is (see above), else undefined. */
export function validatedOrUndefined<T extends object>(obj: T | undefined): T | undefined {
  return obj !== undefined && passed.has(obj) ? obj : undefined;
}

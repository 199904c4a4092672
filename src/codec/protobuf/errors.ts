/** A value that cannot be converted; `path` collects the JSON field path on the way up. */
export class FieldError extends Error {
  path: string[] = [];
}

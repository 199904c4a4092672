/** The two errors a bench command reports as one line, without a stack (bench/run.ts decides the exit code). */

/** A bad command line: reported as its message alone (exit 2). */
export class UsageError extends Error {
  override name = 'UsageError';
}
/** The target refused or could not be reached: reported as one line like a usage error, but exit 1. */
export class TargetError extends UsageError {
  override name = 'TargetError';
}

/** A bounded poll for tests that wait on the server's asynchronous work (controllers, signers). */
import assert from 'node:assert/strict';

/**
 * Calls fn every 20 ms until it returns a value other than undefined and returns that value;
 * fails with `timed out waiting for <what>` after timeoutMs (or 10,000 calls).
 */
export async function until<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < 10_000 && Date.now() < deadline; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  return assert.fail(`timed out waiting for ${what}`);
}

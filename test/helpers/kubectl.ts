/** Runs the real kubectl v1.32 against a test server with an isolated cache and home. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import assert from 'node:assert/strict';

export const KUBECTL = '/usr/bin/kubectl';

export interface Run { code: number; stdout: string; stderr: string }

/** server() and home() are read at call time (the server starts in a before hook). */
export function kubectlRunner(server: () => string, home: () => string, timeoutMs = 30_000, cacheDir = (h: string) => join(h, 'cache')) {
  function kubectl(...args: string[]): Promise<Run> {
    return new Promise((done) => {
      execFile(KUBECTL, ['--server', server(), '--cache-dir', cacheDir(home()), '--request-timeout', '20s', ...args], {
        env: { ...process.env, KUBECONFIG: '/dev/null', HOME: home() }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024,
      }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as any).code === 'number' ? (err as any).code : -1) : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr) });
      });
    });
  }
  async function ok(...args: string[]): Promise<string> {
    const r = await kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
    return r.stdout;
  }
  return { kubectl, ok };
}

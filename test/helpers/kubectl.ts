/** Runs the real kubectl v1.32 against a test server with an isolated cache and home. */
import { before, after } from 'node:test';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { tmpdir } from 'node:os';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './server.js';

export const KUBECTL = '/usr/bin/kubectl';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl with these arguments, KUBECONFIG and HOME; never rejects (a failure is a non-zero code). */
export function runKubectl(
  args: string[],
  env: { KUBECONFIG: string; HOME: string },
  timeoutMs = 30_000,
): Promise<Run> {
  return new Promise((done) => {
    execFile(
      KUBECTL,
      args,
      { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as any).code === 'number' ? (err as any).code : -1) : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

let cacheRoot: string | undefined;

/**
 * The environment of a kubectl run against `s`: no kubeconfig, and a discovery cache of this
 * server's own (KUBECACHEDIR). kubectl keys its cache by host and port only, so with the shared
 * ~/.kube/cache a server on a port an earlier test's server had (of the other --api-domain) was
 * read with that server's discovery: "Unable to list flowcontrol.apiserver.plat.io/v1 …" against
 * a k8s.io server, once in a full run. Removed when the test file's process exits.
 */
export function kubectlEnv(s: TestServer): NodeJS.ProcessEnv {
  if (cacheRoot === undefined) {
    const root = mkdtempSync(join(tmpdir(), 'plat-kubecache-'));
    cacheRoot = root;
    process.on('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  return { ...process.env, KUBECONFIG: '/dev/null', KUBECACHEDIR: join(cacheRoot, basename(s.dataDir)) };
}

/** server() and home() are read at call time (the server starts in a before hook). */
export function kubectlRunner(
  server: () => string,
  home: () => string,
  timeoutMs = 30_000,
  cacheDir = (h: string) => join(h, 'cache'),
) {
  function kubectl(...args: string[]): Promise<Run> {
    return runKubectl(
      ['--server', server(), '--cache-dir', cacheDir(home()), '--request-timeout', '20s', ...args],
      { KUBECONFIG: '/dev/null', HOME: home() },
      timeoutMs,
    );
  }
  async function ok(...args: string[]): Promise<string> {
    const r = await kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
    return r.stdout;
  }
  return { kubectl, ok };
}

/**
 * A server started with `args` and a kubectl home directory (`plat-kubectl-<name>-*`) for the
 * whole test file: registers the before and after hooks; url and dir are read once they ran.
 */
export function kubectlWithServer(name: string, args: string[] = [], timeoutMs = 30_000) {
  let s: TestServer | undefined;
  let dir = '';
  before(async () => {
    s = await startServer(args);
    dir = mkdtempSync(join(tmpdir(), `plat-kubectl-${name}-`));
  });
  after(async () => {
    if (s) {
      await s.stop();
      s.cleanup();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const runner = kubectlRunner(
    () => s!.url,
    () => dir,
    timeoutMs,
  );
  return {
    ...runner,
    get url(): string {
      return s!.url;
    },
    get dir(): string {
      return dir;
    },
  };
}

/**
 * Runs the server's entry point as a child process that is expected to exit by itself (a
 * startup error, --help, --version) and returns its exit code and output. Bounded: a process
 * still running after timeoutMs is killed and reported with code null.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

const MAIN = resolve(process.cwd(), 'dist/src/main.js');

export interface MainRun { code: number | null; stdout: string; stderr: string }

export async function runMain(args: string[], timeoutMs = 90_000): Promise<MainRun> {
  const proc = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  proc.stdout!.on('data', (d) => { stdout += d; });
  proc.stderr!.on('data', (d) => { stderr += d; });
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const [code] = await once(proc, 'exit') as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * Runs the server's entry point as a child process that is expected to exit by itself (a
 * startup error, --help, --version) and returns its exit code and output. Bounded: a process
 * still running after timeoutMs is killed and reported with code null.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

const MAIN = resolve(process.cwd(), 'dist/src/main.js');

export interface MainRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export async function runMain(args: string[], timeoutMs = 90_000): Promise<MainRun> {
  const proc = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '',
    stderr = '';
  proc.stdout!.on('data', (d) => {
    stdout += d;
  });
  proc.stderr!.on('data', (d) => {
    stderr += d;
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(proc, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface RunningMain {
  url: string;
  proc: ReturnType<typeof spawn>;
  /** everything written so far */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then the exit code */
  stop(): Promise<number | null>;
}

/** Starts the entry point (its plain port must be on) and waits for the listening line, keeping all its output. */
export async function startMain(args: string[], timeoutMs = 90_000): Promise<RunningMain> {
  const proc = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '',
    stderr = '';
  proc.stderr!.on('data', (d) => {
    stderr += d;
  });
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      fail(new Error(`no listening line within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    proc.stdout!.on('data', (d) => {
      stdout += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        done(Number(m[1]));
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`exited with ${code}: ${stderr}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/**
 * A throw-away single-member etcd for the benchmarks: Debian's binary (or $ETCD_BIN) on free
 * loopback ports, data under a temp dir that stop() removes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { freePort, sleep } from './procs.js';

export async function startEtcd(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const root = mkdtempSync(join(tmpdir(), 'plat-bench-etcd-'));
  const [cp, pp] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${cp}`,
    peer = `http://127.0.0.1:${pp}`;
  const proc = spawn(
    process.env.ETCD_BIN ?? '/usr/bin/etcd',
    [
      '--name',
      'bench',
      '--data-dir',
      join(root, 'data'),
      '--listen-client-urls',
      url,
      '--advertise-client-urls',
      url,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `bench=${peer}`,
      '--quota-backend-bytes',
      String(4 * 1024 ** 3),
    ],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if (((await (await fetch(`${url}/health`)).json()) as { health: string }).health === 'true') break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error('etcd did not start');
    await sleep(50); // bounded readiness poll
  }
  return {
    url,
    pid: proc.pid!,
    stop: async () => {
      proc.kill('SIGTERM');
      await once(proc, 'exit');
      rmSync(root, { recursive: true, force: true });
    },
  };
}

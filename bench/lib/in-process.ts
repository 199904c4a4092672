/**
 * The in-process front benches (apply-front, front-create, front-get, front-pods-memory): a real
 * ApiServer in this process on a free loopback port, with a data directory of its own and one
 * namespace made, handed to the bench and shut down and removed after; and their `main` runner.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiServer } from '../../src/server/server.js';
import { parseArgs } from '../../src/server/options.js';

export interface InProcess {
  server: ApiServer;
  /** http://127.0.0.1:<port> */
  base: string;
}

/** POSTs a JSON body; anything but a 201 throws. */
export async function postJson(base: string, path: string, body: unknown): Promise<void> {
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
}

/** Runs `fn` against a fresh server (extra server flags in `serverArgs`) holding namespace `namespace`. */
export async function inProcessServer<T>(
  name: string,
  namespace: string,
  serverArgs: string[],
  fn: (s: InProcess) => Promise<T>,
): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const server = new ApiServer(
    parseArgs(['--port', '0', '--secure-port', 'off', '--data-dir', dataDir, ...serverArgs]),
  );
  try {
    const base = `http://127.0.0.1:${await server.start()}`;
    await postJson(base, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    return await fn({ server, base });
  } finally {
    await server.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Runs a bench's main: exit 0 when it resolves, else its error on stderr and exit 1. */
export function runMain(name: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`${name}: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}

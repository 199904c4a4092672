/**
 * The command line, loaded by src/main.ts once the heap is set up: parse flags, check the
 * data directory, start the server, print the listening lines, handle SIGTERM. A startup
 * error is one line naming the flag and the fix (src/api/startup-error.ts), never a stack:
 * exit 2 for a flag that does not parse, 1 for anything else that stops the start.
 *
 * The server itself (./server.ts: ~300 modules, most of a start's front-thread CPU) and
 * `--reshard` (LMDB) are loaded only once the flags parsed and the data directory checked: a
 * refused flag, --help and --version answer without them.
 */
import { parseArgs, type ServerOptions } from './options.js';
import type { ApiServer } from './server.js';
import { secureDataDir } from '../storage/data-dir.js';
import { ensureWritableDir, prepareDataDir } from './data-dir.js';
import { oneLine } from '../api/startup-error.js';
import { renderHelp } from './flag-docs.js';
import { logRiskyWarnings, logStartSummary } from './start-summary.js';
import { GIT_VERSION, VERSION_INFO } from '../api/release.js';

/** How long a refused start waits for the shard actors to finish loading before it exits. */
const LOADED_WAIT_MS = 10_000;

function fail(e: unknown, code: number): never {
  process.stderr.write(`error: ${oneLine(e)}\n`);
  process.exit(code);
}

/** The identity check (and `--reshard`) before any shard opens the directory. */
async function checkDataDir(options: ServerOptions): Promise<void> {
  const state = prepareDataDir(options);
  if (state.kind !== 'reshard') return;
  process.stdout.write(`resharding ${options.dataDir} from ${state.from} to ${options.shards} shards\n`);
  const { reshard } = await import('./reshard.js');
  const r = await reshard(options.dataDir, state.from, state.identity);
  process.stdout.write(
    `resharded ${r.from} → ${r.to} shards: ${r.keysBefore} keys before, ${r.keysAfter} after, every key verified; the old shards are in ${r.backupDir}\n`,
  );
}

/** `backup --data-dir DIR --to TARGET` (src/server/backup.ts): a consistent copy of a running server's data. */
async function backup(argv: string[]): Promise<void> {
  const { backupDataDir, parseBackupArgs } = await import('./backup.js');
  let args: { dataDir: string; target: string };
  try {
    args = parseBackupArgs(argv);
  } catch (e) {
    fail(e, 2);
  }
  try {
    const r = await backupDataDir(args.dataDir, args.target);
    process.stdout.write(
      `backed up ${args.dataDir} to ${r.target}: ${r.shards} shards, ${r.keys} keys (start a server on it with --data-dir ${r.target})\n`,
    );
  } catch (e) {
    fail(e, 1);
  }
}

/** `migrate-to-etcd` (src/server/migrate.ts): a stopped LMDB data directory's keys into etcd. */
async function migrate(argv: string[]): Promise<void> {
  const { migrateToEtcd, parseMigrateArgs } = await import('./migrate.js');
  let args: ReturnType<typeof parseMigrateArgs>;
  try {
    args = parseMigrateArgs(argv);
  } catch (e) {
    fail(e, 2);
  }
  try {
    const r = await migrateToEtcd(args);
    process.stdout.write(
      `migrated ${args.dataDir} to etcd ${args.servers.join(',')}${args.prefix}: ${r.shards} shards, ${r.keys} keys, counted on both sides (start with --storage-backend etcd3 --etcd-servers ${args.servers.join(',')} --etcd-prefix ${args.prefix})\n`,
    );
    process.exit(0);
  } catch (e) {
    fail(e, 1);
  }
}

/**
 * Checks the data directory and starts the server; a refused start exits 1, but only once the
 * shard actors (started early) have loaded their modules: a thread torn down while it loads
 * LMDB's native addon aborts the whole process (napi_throw in module registration).
 */
async function startServer(options: ServerOptions): Promise<{ server: ApiServer; port: number }> {
  let shards: import('./shards.js').StartedShards | undefined;
  try {
    await checkDataDir(options);
    // the shard actors load their modules while this thread loads the server's
    shards = (await import('./shards.js')).startShards(options);
    const { ApiServer } = await import('./server.js');
    // configuration files named by flags (audit policy, ...) are read here
    const server = new ApiServer(options, shards);
    return { server, port: await server.start() };
  } catch (e) {
    await shards?.pool.loaded(LOADED_WAIT_MS);
    fail(e, 1);
  }
}

/** The SIGTERM/SIGINT handler: one graceful shutdown (after --shutdown-delay-duration), then exit. */
function gracefulStop(
  server: ApiServer,
  options: ServerOptions,
  log: ApiServer['log'],
): (signal: NodeJS.Signals) => void {
  let stopping = false;
  return (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info('Received signal, shutting down', { signal, delay: `${options.shutdownDelayMs / 1000}s` });
    const started = Date.now();
    server.shutdown().then(
      () => {
        log.info('Shutdown complete', {
          duration: `${((Date.now() - started) / 1000).toFixed(3)}s`,
          droppedLogLines: log.dropped || undefined,
        });
        log.flushSync();
        process.exit(0);
      },
      (e) => {
        log.error('Shutdown failed', { err: oneLine(e) });
        log.flushSync();
        process.exit(1);
      },
    );
  };
}

async function main(): Promise<void> {
  if (process.argv[2] === 'backup') return backup(process.argv.slice(3));
  if (process.argv[2] === 'migrate-to-etcd') return migrate(process.argv.slice(3));
  let options: ServerOptions;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (e) {
    fail(e, 2);
  }
  if (options.help) {
    process.stdout.write(renderHelp());
    return;
  }
  if (options.version) {
    process.stdout.write(
      options.version === 'raw' ? `${JSON.stringify(VERSION_INFO, null, 2)}\n` : `platform-apiserver ${GIT_VERSION}\n`,
    );
    return;
  }
  for (const w of options.warnings) process.stderr.write(`warning: ${w}\n`);
  // before anything opens or creates a file there (issue 18 item 9); a directory that cannot be
  // made is one line naming --data-dir
  try {
    ensureWritableDir(options.dataDir);
    for (const w of secureDataDir(options.dataDir)) process.stderr.write(`warning: ${w}\n`);
  } catch (e) {
    fail(e, 1);
  }
  const { server, port } = await startServer(options);
  if (port > 0) process.stdout.write(`listening on http://${options.insecureBindAddress}:${port}\n`);
  const log = server.log;
  logStartSummary(log, options, {
    port,
    securePort: server.securePort,
    serviceAccountIssuer: server.auth.serviceAccountIssuer,
    kubeconfig: server.kubeconfig,
  });
  logRiskyWarnings(log, options, port);
  const stop = gracefulStop(server, options, log);
  // A request must never take the server down: an unexpected rejection is logged (never with
  // request data) and the process goes on, as upstream recovers a panicking handler.
  process.on('unhandledRejection', (e) => {
    process.stderr.write(`error: unhandled rejection: ${(e as Error)?.message ?? String(e)}\n`);
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => fail(e, 1));

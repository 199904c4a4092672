/** Entry point: parse flags, start the server, print the listening lines, handle SIGTERM. */
import { parseArgs } from './server/options.js';
import { ApiServer } from './server/server.js';
import { secureDataDir } from './storage/data-dir.js';

async function main(): Promise<void> {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`error: ${(e as Error).message}\n`);
    process.exit(2);
  }
  for (const w of options.warnings) process.stderr.write(`warning: ${w}\n`);
  // before anything opens or creates a file there (issue 18 item 9)
  for (const w of secureDataDir(options.dataDir)) process.stderr.write(`warning: ${w}\n`);
  let server: ApiServer;
  try {
    server = new ApiServer(options);
  } catch (e) {
    // configuration files named by flags (audit policy, ...) are read here
    process.stderr.write(`error: ${(e as Error).message}\n`);
    process.exit(1);
  }
  const port = await server.start();
  if (port > 0) process.stdout.write(`listening on http://${options.insecureBindAddress}:${port}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.shutdown().then(() => process.exit(0), () => process.exit(1));
  };
  // A request must never take the server down: an unexpected rejection is logged (never with
  // request data) and the process goes on, as upstream recovers a panicking handler.
  process.on('unhandledRejection', (e) => {
    process.stderr.write(`error: unhandled rejection: ${(e as Error)?.message ?? String(e)}\n`);
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  process.stderr.write(`error: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});

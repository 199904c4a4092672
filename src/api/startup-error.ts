/**
 * Startup errors an operator can act on: one line naming the flag, its value, what went wrong
 * and the fix (`--secure-port 6443: address already in use (choose another with --secure-port)`).
 * main prints the message alone (never a stack) and exits 1.
 */
import { createServer } from 'node:net';

/** The reason words of the system errors a start can meet; others keep their own message. */
const REASONS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available on this machine',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
};

/** The short reason of a system error (its code's words), else its message. */
export function reasonOf(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && REASONS[code]) return REASONS[code]!;
  return String((e as Error)?.message ?? e);
}

/** An Error whose message is the one startup line: `--flag value: reason (fix)`. */
export function flagError(flag: string, value: string | number, reason: string, fix: string): Error {
  return new Error(`--${flag} ${value}: ${reason} (${fix})`);
}

/**
 * Why host:port cannot be bound, asked of node:net (uWebSockets.js reports only failure):
 * the errno's words, or a generic reason when the probe binds after all (a race).
 */
export function probeListen(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (e) => resolve(reasonOf(e)));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve('cannot listen')));
  });
}

/** The startup error for a listener that failed to bind. */
export async function listenError(flag: 'port' | 'secure-port', host: string, port: number): Promise<Error> {
  const reason = await probeListen(host, port);
  const hostFlag = flag === 'port' ? 'insecure-bind-address' : 'bind-address';
  if (reason === REASONS.EADDRNOTAVAIL)
    return flagError(hostFlag, host, reason, `choose another address with --${hostFlag}`);
  return flagError(flag, port, reason, `choose another with --${flag}`);
}

/** An error's message on one line (line breaks become "; "): what main prints. */
export function oneLine(e: unknown): string {
  const m = String((e as Error)?.message ?? e);
  return m.trim().replace(/\s*\n\s*/g, '; ') || 'unknown error';
}

/**
 * The audit log backend (`--audit-log-path`): JSON lines, `-` for stdout. Writing never blocks
 * the front thread: events are appended to an in-memory batch that is flushed once per event
 * loop turn by one asynchronous file write; writes are serialized on a promise chain, which also
 * runs the size-based rotation (lumberjack's rules, as upstream: `--audit-log-maxsize` MB, 0 =
 * 100 MB; `--audit-log-maxbackup` files, 0 = keep all; `--audit-log-maxage` days, 0 = no limit).
 */
import { open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';

export interface AuditLogOptions {
  path: string;
  maxSizeMB: number;
  maxBackups: number;
  maxAgeDays: number;
}

const MB = 1024 * 1024;

export class AuditLog {
  private batch: string[] = [];
  private scheduled = false;
  private chain: Promise<void> = Promise.resolve();
  private file: FileHandle | undefined;
  private size = 0;
  /** failures are reported once per kind, never with event contents */
  private failed = false;
  private readonly maxBytes: number;

  constructor(private readonly o: AuditLogOptions) {
    this.maxBytes = (o.maxSizeMB > 0 ? o.maxSizeMB : 100) * MB;
  }

  /** Queues one event line (without the newline). O(1); the write happens later. */
  write(line: string): void {
    this.batch.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes what is queued and waits for every pending write (shutdown, tests). */
  async close(): Promise<void> {
    this.flush();
    await this.chain;
    await this.file?.close();
    this.file = undefined;
  }

  private flush(): void {
    this.scheduled = false;
    if (this.batch.length === 0) return;
    const lines = this.batch;
    this.batch = [];
    if (this.o.path === '-') {
      process.stdout.write(lines.join('\n') + '\n');
      return;
    }
    this.chain = this.chain.then(() => this.append(lines)).catch((e) => this.report(e, lines.length));
  }

  private async append(lines: string[]): Promise<void> {
    if (!this.file) await this.openFile();
    // rotate before a line that would cross the limit (a batch may span files)
    let chunk: string[] = [];
    let bytes = 0;
    for (const l of lines) {
      const n = Buffer.byteLength(l) + 1;
      if (this.size + bytes + n > this.maxBytes && this.size + bytes > 0) {
        await this.writeChunk(chunk, bytes);
        chunk = [];
        bytes = 0;
        await this.rotate();
      }
      chunk.push(l);
      bytes += n;
    }
    await this.writeChunk(chunk, bytes);
  }

  private async writeChunk(lines: string[], bytes: number): Promise<void> {
    if (lines.length === 0) return;
    await this.file!.write(lines.join('\n') + '\n');
    this.size += bytes;
  }

  private async openFile(): Promise<void> {
    this.file = await open(this.o.path, 'a', 0o600);
    this.size = (await stat(this.o.path)).size;
  }

  /** lumberjack: the file becomes `<name>-<UTC time><ext>`, a new one starts, old backups are pruned. */
  private async rotate(): Promise<void> {
    await this.file?.close();
    this.file = undefined;
    const ext = extname(this.o.path);
    const base = basename(this.o.path, ext);
    const stamp = new Date().toISOString().replace(/:/g, '-').replace('Z', '');
    await rename(this.o.path, join(dirname(this.o.path), `${base}-${stamp}${ext}`));
    await this.openFile();
    await this.prune(base, ext);
  }

  private async prune(base: string, ext: string): Promise<void> {
    const dir = dirname(this.o.path);
    const pattern = new RegExp(
      `^${escapeRe(base)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})${escapeRe(ext)}$`,
    );
    const backups = (await readdir(dir))
      .map((f) => ({ f, m: pattern.exec(f) }))
      .filter((x) => x.m)
      .map((x) => ({ f: x.f, t: Date.parse(x.m![1]!.replace(/T(\d{2})-(\d{2})-(\d{2})/, 'T$1:$2:$3') + 'Z') }))
      .sort((a, b) => b.t - a.t);
    const cutoff = this.o.maxAgeDays > 0 ? Date.now() - this.o.maxAgeDays * 86_400_000 : -Infinity;
    for (const [i, b] of backups.entries()) {
      if ((this.o.maxBackups > 0 && i >= this.o.maxBackups) || b.t < cutoff)
        await unlink(join(dir, b.f)).catch(() => undefined);
    }
  }

  /** events lost to write failures (apiserver_audit_error_total) */
  errors = 0;

  private report(e: unknown, lost = 1): void {
    this.errors += lost;
    if (this.failed) return;
    this.failed = true;
    process.stderr.write(`error: audit log ${this.o.path}: ${(e as Error)?.message ?? String(e)}\n`);
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The process_* families every upstream component exposes (the Prometheus process collector):
 * CPU seconds, resident and virtual memory, open and maximum file descriptors, start time. Read
 * at scrape time from the process and /proc; a family whose source is missing (not Linux) is
 * left out. The collector's HELP texts carry no stability class, as upstream's.
 */
import { readdirSync, readFileSync } from 'node:fs';

const START_SECONDS = performance.timeOrigin / 1000;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Field n (1-based, as proc(5) numbers them) of a /proc stat line; the command name may hold spaces. */
export function statField(stat: string, n: number): number | undefined {
  // what follows "(comm) " starts at field 3
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const v = Number(rest[n - 3]);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * CPU ticks (user + system, USER_HZ = 1/100 s) of every thread of a process, by kernel thread id,
 * from /proc/<pid>/task/<tid>/stat (a thread that ends between the listing and the read is left out).
 */
export function threadCpuTicks(pid: number | 'self' = 'self'): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = read(`/proc/${pid}/task/${tid}/stat`);
    if (stat) out.set(tid, (statField(stat, 14) ?? 0) + (statField(stat, 15) ?? 0));
  }
  return out;
}

/** The monotonic clock in µs, the same in every thread and process (the watch trace's and the bench's `bench-ts` stamps). */
export function monoUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export function processMetricsText(): string {
  const out: string[] = [];
  const put = (name: string, type: string, help: string, value: number | undefined) => {
    if (value === undefined) return;
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
  };
  const cpu = process.cpuUsage();
  put(
    'process_cpu_seconds_total',
    'counter',
    'Total user and system CPU time spent in seconds.',
    (cpu.user + cpu.system) / 1e6,
  );
  let fds: number | undefined;
  try {
    fds = readdirSync('/proc/self/fd').length;
  } catch {
    fds = undefined;
  }
  const limit = /^Max open files\s+(\d+)/m.exec(read('/proc/self/limits') ?? '');
  put('process_max_fds', 'gauge', 'Maximum number of open file descriptors.', limit ? Number(limit[1]) : undefined);
  put('process_open_fds', 'gauge', 'Number of open file descriptors.', fds);
  put('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', process.memoryUsage.rss());
  put('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.', START_SECONDS);
  const stat = read('/proc/self/stat');
  // field 23 of proc(5) is vsize in bytes
  put('process_virtual_memory_bytes', 'gauge', 'Virtual memory size in bytes.', stat ? statField(stat, 23) : undefined);
  return out.join('\n') + '\n';
}

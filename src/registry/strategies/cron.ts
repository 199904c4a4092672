/**
 * The standard cron syntax CronJobs accept (upstream uses robfig/cron ParseStandard): five
 * fields (minute hour day-of-month month day-of-week) or a descriptor (@hourly, @every 1h, ...).
 * Returns robfig's error message, or undefined when the schedule parses.
 */
interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTHS = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAYS = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const FIELDS: Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

export function cronError(schedule: string): string | undefined {
  let spec = schedule.trim();
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) spec = spec.slice(spec.indexOf(' ') + 1).trim();
  if (spec.startsWith('@')) return descriptorError(spec);
  const fields = spec.split(/\s+/).filter(Boolean);
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  for (let i = 0; i < 5; i++) {
    for (const part of fields[i]!.split(',')) {
      const err = rangeError(part, FIELDS[i]!);
      if (err) return err;
    }
  }
  return undefined;
}

function descriptorError(spec: string): string | undefined {
  if (DESCRIPTORS.has(spec)) return undefined;
  if (spec.startsWith('@every ')) {
    const d = spec.slice(7).trim();
    return /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(d)
      ? undefined
      : `failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(d)}`;
  }
  return `unrecognized descriptor: ${spec}`;
}

/** One `a`, `a-b`, `*` or `?` term with an optional `/step`. */
function rangeError(expr: string, b: Bounds): string | undefined {
  const slash = expr.split('/');
  if (slash.length > 2) return `too many slashes: ${expr}`;
  const dash = slash[0]!.split('-');
  if (dash.length > 2) return `too many hyphens: ${expr}`;
  let start: number;
  let end: number;
  if (dash[0] === '*' || dash[0] === '?') {
    start = b.min;
    end = b.max;
  } else {
    const s = value(dash[0]!, b);
    if (typeof s === 'string') return s;
    start = s;
    end = s;
    if (dash.length === 2) {
      const e = value(dash[1]!, b);
      if (typeof e === 'string') return e;
      end = e;
    }
  }
  if (slash.length === 2) {
    const step = int(slash[1]!);
    if (typeof step === 'string') return step;
    if (step <= 0) return `step of range should be a positive number: ${expr}`;
    if (dash.length === 1 && dash[0] !== '*' && dash[0] !== '?') end = b.max;
  }
  if (start < b.min) return `beginning of range (${start}) below minimum (${b.min}): ${expr}`;
  if (end > b.max) return `end of range (${end}) above maximum (${b.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  return undefined;
}

function value(s: string, b: Bounds): number | string {
  const key = s.toLowerCase();
  return b.names && Object.hasOwn(b.names, key) ? b.names[key]! : int(s);
}

function int(s: string): number | string {
  if (!/^[+-]?\d+$/.test(s))
    return `failed to parse int from ${s}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`;
  const n = Number(s);
  return n < 0 ? `negative number (${n}) not allowed: ${s}` : n;
}

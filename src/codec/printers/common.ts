/**
 * The building blocks of the built-in Table printers: the column type, Name and Age, and the
 * cell helpers upstream's printers share (label and selector formatting, container layout,
 * "+ N more..." lists, timestamps as HumanDuration). The server prints every column, as
 * upstream's table convertor asks its printers for the wide output.
 */
import { conditionsOf, type Condition, type KubeObject } from '../../api/object.js';

export type Cell = string | number | boolean | null;

/**
 * One column of a kind's Table: its definition and its cell of an object. `T` is the shape of the
 * kind the column prints (src/api/printable.ts, kinds.ts); the table hands each kind's columns
 * objects of that kind only. `cell` is a method, so a column of one kind (or of every kind, as
 * Name and Age) is usable in a list of `Column`.
 */
export interface Column<T extends KubeObject = KubeObject> {
  name: string;
  type: 'string' | 'integer' | 'date' | 'number' | 'boolean';
  format: string;
  description: string;
  priority: number;
  cell(obj: T, now: number): Cell;
}

/** A cell function of a kind `T`. */
export type CellOf<T extends KubeObject> = (obj: T, now: number) => Cell;

export const col = <T extends KubeObject = KubeObject>(
  name: string,
  type: Column['type'],
  cell: CellOf<T>,
  priority = 0,
  format = '',
  description = '',
): Column<T> => ({ name, type, format, description: description || `${name} of the object`, priority, cell });

/** A `-o wide` column (priority 1). */
export const wide = <T extends KubeObject = KubeObject>(
  name: string,
  type: Column['type'],
  cell: CellOf<T>,
  description = '',
): Column<T> => col(name, type, cell, 1, '', description);

/** apimachinery duration.HumanDuration of whole seconds */
export function humanDuration(seconds: number): string {
  if (seconds < 0) return seconds < -1 ? '<invalid>' : '0s';
  if (seconds < 120) return `${seconds}s`;
  const m = Math.floor(seconds / 60),
    h = Math.floor(seconds / 3600),
    d = Math.floor(h / 24);
  const unit = (a: number, ua: string, b: number, ub: string) => (b ? `${a}${ua}${b}${ub}` : `${a}${ua}`);
  if (m < 10) return unit(m, 'm', seconds % 60, 's');
  if (m < 180) return `${m}m`;
  if (h < 8) return unit(h, 'h', m % 60, 'm');
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return unit(d, 'd', h % 24, 'h');
  if (h < 24 * 365 * 2) return `${d}d`;
  if (h < 24 * 365 * 8) return unit(Math.floor(d / 365), 'y', d % 365, 'd');
  return `${Math.floor(d / 365)}y`;
}

/** Whole seconds from a to b (RFC 3339 strings or epoch ms), truncated toward zero as Go's Duration.Seconds. */
export const secondsBetween = (from: string | number, to: string | number): number =>
  Math.trunc(
    ((typeof to === 'number' ? to : Date.parse(to)) - (typeof from === 'number' ? from : Date.parse(from))) / 1000,
  );

/** upstream translateTimestampSince: the HumanDuration since a timestamp, `<unknown>` when unset. */
export function age(ts: string | undefined | null, now: number): string {
  if (!ts || Number.isNaN(Date.parse(ts))) return '<unknown>';
  return humanDuration(secondsBetween(ts, now));
}

export const NAME = col(
  'Name',
  'string',
  (o) => o.metadata?.name ?? '',
  0,
  'name',
  'Name must be unique within a namespace.',
);
export const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created.';
export const AGE = col('Age', 'string', (o, now) => age(o.metadata?.creationTimestamp, now), 0, '', AGE_DESCRIPTION);

/** labels.FormatLabels: `k=v` sorted by key, `<none>` when empty. */
export function formatLabels(m: Record<string, unknown> | undefined | null): string {
  const keys = Object.keys(m ?? {}).sort();
  return keys.length ? keys.map((k) => `${k}=${m![k]}`).join(',') : '<none>';
}

/** labels.Selector.String of a metav1.LabelSelector (requirements sorted by key); undefined when invalid. */
export function selectorString(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return '';
  const sel = value as { matchLabels?: Record<string, unknown>; matchExpressions?: unknown };
  const reqs: [string, string][] = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => [k, `${k}=${v}`]);
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions : []) {
    const values = [...(e?.values ?? [])].map(String).sort().join(',');
    switch (e?.operator) {
      case 'In':
        reqs.push([e.key, `${e.key} in (${values})`]);
        break;
      case 'NotIn':
        reqs.push([e.key, `${e.key} notin (${values})`]);
        break;
      case 'Exists':
        reqs.push([e.key, e.key]);
        break;
      case 'DoesNotExist':
        reqs.push([e.key, `!${e.key}`]);
        break;
      default:
        return undefined;
    }
  }
  return reqs
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map((r) => r[1])
    .join(',');
}

/** metav1.FormatLabelSelector: the selector string, `<none>` when it selects everything or nothing. */
export const formatLabelSelector = (sel: unknown): string => {
  const s = selectorString(sel);
  return s === undefined ? '<error>' : s || '<none>';
};

/** layoutContainerCells: container names and images, comma-joined. */
export const containerNames = (containers: unknown): string =>
  (Array.isArray(containers) ? containers : []).map((c: { name?: string } | undefined) => c?.name ?? '').join(',');
export const containerImages = (containers: unknown): string =>
  (Array.isArray(containers) ? containers : []).map((c: { image?: string } | undefined) => c?.image ?? '').join(',');

/** The wide Containers and Images columns of a pod template at `spec(o)`. */
export function templateColumns<T extends KubeObject>(
  podSpec: (o: T) => { containers?: unknown } | undefined,
): Column<T>[] {
  return [
    wide<T>(
      'Containers',
      'string',
      (o) => containerNames(podSpec(o)?.containers),
      'Names of each container in the template.',
    ),
    wide<T>(
      'Images',
      'string',
      (o) => containerImages(podSpec(o)?.containers),
      'Images referenced by each container in the template.',
    ),
  ];
}

/** listWithMoreString: the first `max` items, then ` + N more...`; `<unset>` when empty. */
export function listWithMore(items: string[], max = 3): string {
  const shown = items.slice(0, max).join(',');
  if (items.length > max) return `${shown} + ${items.length - max} more...`;
  return shown || '<unset>';
}

/** printBoolPtr: True, False or `<unset>`. */
export const boolPtr = (v: unknown): string => (typeof v === 'boolean' ? (v ? 'True' : 'False') : '<unset>');

/** resource.Quantity as stored (canonical, as decoding wrote it); a missing quantity is 0. */
export const quantity = (q: unknown): string => (q === undefined || q === null || q === '' ? '0' : String(q));

/** IntOrString.String */
export const intOrString = (v: unknown): string => String(v);

/** A list field as an array: [] when absent or malformed (not an array). */
export function asList<T>(v: readonly T[] | null | undefined): T[];
export function asList(v: unknown): unknown[];
export function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The condition of a type, if any. */
export const condition = (o: { status?: unknown } | undefined, type: string): Condition | undefined =>
  conditionsOf(o).find((c) => c?.type === type);

/**
 * Label and annotation domains upstream spells `kubernetes.io`: this server's identity uses
 * `plat.io` (and `platform.io` for the product word), so printers read all three.
 */
export const LABEL_DOMAINS = ['kubernetes.io', 'plat.io', 'platform.io'];

/** The first of `<prefix><domain><suffix>` set on the map, for each label domain. */
export function domainValue(m: Record<string, unknown> | undefined, prefix: string, suffix: string): unknown {
  for (const d of LABEL_DOMAINS) {
    const v = m?.[`${prefix}${d}${suffix}`];
    if (v !== undefined) return v;
  }
  return undefined;
}

/** upstream's storage-class helpers: the beta annotation wins over spec.storageClassName. */
export function storageClassOf(o: KubeObject<{ storageClassName?: string }>): string {
  const beta = domainValue(o.metadata?.annotations, 'volume.beta.', '/storage-class');
  return typeof beta === 'string' ? beta : (o.spec?.storageClassName ?? '');
}

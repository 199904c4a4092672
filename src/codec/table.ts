/**
 * Server-side Table rendering (meta/v1 Table) and PartialObjectMetadata views. The built-in
 * kinds print with upstream's columns (src/codec/printers/); every other kind gets Name and
 * Created At, as upstream's default table convertor.
 */
import { AGE_DESCRIPTION, NAME, age, col, type Cell, type Column } from './printers/common.js';
import { COLUMNS, ROW_ORDER } from './printers/index.js';
import { stringifyValue } from '../schema/deep-value.js';
import type { KubeObject } from '../api/object.js';

export { age, humanDuration, type Column } from './printers/common.js';

const DEFAULT: Column[] = [
  NAME,
  col('Created At', 'date', (o) => o.metadata?.creationTimestamp ?? null, 0, '', AGE_DESCRIPTION),
];

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Columns of custom resources (CRD additionalPrinterColumns), by `<apiVersion>/<kind>`. */
const CUSTOM = new Map<string, Column[]>();

/** Registers (or with undefined, removes) the columns of a custom resource version. */
export function setCustomColumns(apiVersion: string, kind: string, columns: Column[] | undefined): void {
  if (columns) CUSTOM.set(`${apiVersion}/${kind}`, columns);
  else CUSTOM.delete(`${apiVersion}/${kind}`);
}

/** What a kind's row order compares (ROW_ORDER: FlowSchemas by matching precedence). */
type RowOrderArg = Parameters<NonNullable<(typeof ROW_ORDER)[string]>>[0];

/** One column of a Table (meta/v1 TableColumnDefinition). */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}
/** One row of a Table: its cells in column order, and the object or its metadata when asked for. */
export interface TableRow {
  cells: Cell[];
  object?: unknown;
}
/** meta/v1 Table, as toTable renders it. */
export interface Table {
  [field: string]: unknown;
  kind: 'Table';
  apiVersion: string;
  metadata: Record<string, unknown>;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

/** The columns for `kind` (a custom key `<apiVersion>/<kind>` or a built-in kind), else by the first object's identity. */
function columnsFor(kind: string, first: { apiVersion?: unknown; kind?: unknown } | undefined): Column[] {
  return (
    CUSTOM.get(kind) ??
    (first ? CUSTOM.get(`${first.apiVersion}/${first.kind}`) : undefined) ??
    COLUMNS[kind] ??
    DEFAULT
  );
}

/** The items in the order upstream prints the kind's rows (FlowSchemas by matching precedence), else as given. */
function inRowOrder<T>(kind: string, items: T[], objOf: (item: T) => RowOrderArg): T[] {
  const order = CUSTOM.has(kind) ? undefined : ROW_ORDER[kind];
  return order && items.length > 1 ? [...items].sort((a, b) => order(objOf(a), objOf(b))) : items;
}

/** A column of a CRD's additionalPrinterColumns (cells from a simple JSONPath). */
export function printerColumn(c: {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}): Column {
  const type = (
    ['string', 'integer', 'date', 'number', 'boolean'].includes(c.type) ? c.type : 'string'
  ) as Column['type'];
  // upstream's tableconvertor prints date columns as the age of the timestamp
  const cell: Column['cell'] =
    type === 'date'
      ? (o, now) => {
          const v = cellAt(o, c.jsonPath, 'string');
          return typeof v === 'string' ? age(v, now) : v;
        }
      : (o) => cellAt(o, c.jsonPath, c.type);
  return {
    name: c.name,
    type,
    format: c.format ?? '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
    cell,
  };
}

/** The customresource table convertor: Name, the printer columns, and Age when there are none. */
export function customColumns(printer: Parameters<typeof printerColumn>[0][]): Column[] {
  const cols = printer.map(printerColumn);
  if (!cols.length)
    cols.push(
      col(
        'Age',
        'date',
        (o, now) => age(o.metadata?.creationTimestamp, now),
        0,
        '',
        'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
      ),
    );
  return [NAME, ...cols];
}

/** Evaluates `.a.b[0].c` and `[?(@.k=="v")]` filters; objects and lists print as JSON, absence as null. */
function cellAt(o: unknown, path: string, type: string): Cell {
  let cur: unknown[] = [o];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\[\?\(@\.([^=!]+)(==|!=)"?([^")]*)"?\)\]|\[\*\]/g;
  const inner = path.replace(/^\{/, '').replace(/\}$/, '');
  let m: RegExpExecArray | null;
  while ((m = re.exec(inner)) !== null) {
    const [, field, index, fk, op, fv] = m;
    const next: unknown[] = [];
    for (const v of cur) {
      if (v === null || typeof v !== 'object') continue;
      if (field !== undefined) {
        const f = (v as Record<string, unknown>)[field];
        if (f !== undefined) next.push(f);
      } else if (index !== undefined) {
        if (Array.isArray(v) && v[Number(index)] !== undefined) next.push(v[Number(index)]);
      } else if (fk !== undefined) {
        if (Array.isArray(v))
          next.push(...v.filter((x) => x && (String((x as Record<string, unknown>)[fk]) === fv) === (op === '==')));
      } else if (Array.isArray(v)) next.push(...v);
    }
    cur = next;
  }
  if (!cur.length || cur[0] === undefined) return null;
  const v = cur.length === 1 ? cur[0] : cur;
  if (v === null || typeof v === 'object') return JSON.stringify(v);
  if (type === 'string' && typeof v !== 'string') return String(v);
  return v as Cell;
}

export function partialObjectMetadata(obj: unknown, metaGroupVersion: string): Record<string, unknown> {
  return {
    kind: 'PartialObjectMetadata',
    apiVersion: metaGroupVersion,
    metadata: (obj as { metadata?: unknown }).metadata,
  };
}

/** Renders objects as a Table of the given meta group version (e.g. meta.plat.io/v1). */
export function toTable(
  kind: string,
  objs: unknown[],
  listMeta: Record<string, unknown>,
  metaGroupVersion: string,
  include: IncludeObject,
  now: number,
): Table {
  const cols = columnsFor(kind, objs[0] as { apiVersion?: unknown; kind?: unknown } | undefined);
  objs = inRowOrder(kind, objs, (o) => o as RowOrderArg);
  return {
    kind: 'Table',
    apiVersion: metaGroupVersion,
    metadata: listMeta,
    columnDefinitions: cols.map(({ name, type, format, description, priority }) => ({
      name,
      type,
      format,
      description,
      priority,
    })),
    rows: objs.map((o) => {
      // the store lists objects of one kind, which its columns print (the edge where a row gets its kind's shape)
      const row: TableRow = { cells: cols.map((c) => c.cell(o as KubeObject, now)) };
      if (include === 'Metadata') row.object = partialObjectMetadata(o, metaGroupVersion);
      else if (include === 'Object') row.object = o;
      return row;
    }),
  };
}

/** The Accept `as=` view of objects: a Table, one PartialObjectMetadata, or a list of them. */
export function renderView(
  kind: string,
  objs: unknown[],
  listMeta: Record<string, unknown>,
  view: { as: string; groupVersion: string; includeObject: IncludeObject },
  now: number,
  isList: boolean,
): Table | Record<string, unknown> {
  if (view.as === 'Table') return toTable(kind, objs, listMeta, view.groupVersion, view.includeObject, now);
  if (view.as === 'PartialObjectMetadata' && !isList) return partialObjectMetadata(objs[0], view.groupVersion);
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: view.groupVersion,
    metadata: listMeta,
    items: objs.map((o) => partialObjectMetadata(o, view.groupVersion)),
  };
}

/** A stored object as the Table list path sees it: its JSON and its metadata's JSON, kept once computed. */
export interface TableEntry {
  obj: { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
  json: string;
  metaJson?: string;
}

/**
 * A JSON Table of a list built as a string join, like JSON lists: the cells are computed per
 * request (Age moves with the clock) but each row's PartialObjectMetadata reuses the metadata
 * JSON cached on the entry. Same document as JSON.stringify(toTable(...)).
 */
export function tableJson(
  kind: string,
  entries: TableEntry[],
  listMeta: Record<string, unknown>,
  metaGroupVersion: string,
  include: IncludeObject,
  now: number,
): string {
  const cols = columnsFor(kind, entries[0]?.obj);
  entries = inRowOrder(kind, entries, (e) => e.obj as RowOrderArg);
  const defs = JSON.stringify(
    cols.map(({ name, type, format, description, priority }) => ({ name, type, format, description, priority })),
  );
  const pomHead = `{"kind":"PartialObjectMetadata","apiVersion":${JSON.stringify(metaGroupVersion)},"metadata":`;
  const rows = entries.map((e) => {
    const cells = JSON.stringify(cols.map((c) => c.cell(e.obj as KubeObject, now)));
    if (include === 'None') return `{"cells":${cells}}`;
    if (include === 'Object') return `{"cells":${cells},"object":${e.json}}`;
    if (e.obj.metadata === undefined)
      return `{"cells":${cells},"object":{"kind":"PartialObjectMetadata","apiVersion":${JSON.stringify(metaGroupVersion)}}}`;
    return `{"cells":${cells},"object":${pomHead}${(e.metaJson ??= stringifyValue(e.obj.metadata))}}}`;
  });
  return `{"kind":"Table","apiVersion":${JSON.stringify(metaGroupVersion)},"metadata":${JSON.stringify(listMeta)},"columnDefinitions":${defs},"rows":[${rows.join(',')}]}`;
}

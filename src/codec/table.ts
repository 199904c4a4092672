/**
 * Server-side Table rendering (meta/v1 Table) and PartialObjectMetadata views. Columns for
 * the kinds users know from `kubectl get`; every other kind gets Name and Created At.
 */
type Cell = string | number | boolean | null;

export interface Column {
  name: string;
  type: 'string' | 'integer' | 'date' | 'number' | 'boolean';
  format: string;
  description: string;
  priority: number;
  cell(obj: any, now: number): Cell;
}

const col = (name: string, type: Column['type'], cell: Column['cell'], priority = 0, format = '', description = ''): Column =>
  ({ name, type, format, description: description || `${name} of the object`, priority, cell });

export function age(ts: string | undefined, now: number): string {
  if (!ts) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** apimachinery duration.HumanDuration of whole seconds */
export function humanDuration(seconds: number): string {
  if (seconds < 0) return seconds < -1 ? '<invalid>' : '0s';
  if (seconds < 120) return `${seconds}s`;
  const m = Math.floor(seconds / 60), h = Math.floor(seconds / 3600), d = Math.floor(h / 24);
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

/** upstream extractCSRStatus: Denied, Approved or Pending, then ,Failed and ,Issued. */
function csrCondition(o: any): string {
  const types = new Set((o.status?.conditions ?? []).map((c: any) => c?.type));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (o.status?.certificate) s += ',Issued';
  return s;
}

const NAME = col('Name', 'string', (o) => o.metadata?.name ?? '', 0, 'name', 'Name must be unique within a namespace.');
const AGE = col('Age', 'string', (o, now) => age(o.metadata?.creationTimestamp, now), 0, '', 'CreationTimestamp is a timestamp representing the server time when this object was created.');
const ready = (o: any) => `${(o.status?.containerStatuses ?? []).filter((c: any) => c.ready).length}/${(o.spec?.containers ?? []).length}`;
const restarts = (o: any) => (o.status?.containerStatuses ?? []).reduce((n: number, c: any) => n + (c.restartCount ?? 0), 0);
const replicasOf = (o: any) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`;
const images = (o: any) => (o.spec?.template?.spec?.containers ?? []).map((c: any) => c.image).join(',');
const containers = (o: any) => (o.spec?.template?.spec?.containers ?? []).map((c: any) => c.name).join(',');
const selector = (o: any) => Object.entries(o.spec?.selector?.matchLabels ?? o.spec?.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(',') || '<none>';
const ports = (o: any) => (o.spec?.ports ?? []).map((p: any) => `${p.port}${p.nodePort ? ':' + p.nodePort : ''}/${p.protocol ?? 'TCP'}`).join(',') || '<none>';

const COLUMNS: Record<string, Column[]> = {
  Pod: [NAME, col('Ready', 'string', ready), col('Status', 'string', (o) => o.status?.reason ?? o.status?.phase ?? 'Unknown'),
    col('Restarts', 'string', (o) => String(restarts(o))), AGE, col('IP', 'string', (o) => o.status?.podIP ?? '<none>', 1),
    col('Node', 'string', (o) => o.spec?.nodeName ?? '<none>', 1), col('Nominated Node', 'string', (o) => o.status?.nominatedNodeName ?? '<none>', 1),
    col('Readiness Gates', 'string', (o) => o.spec?.readinessGates?.length ? String(o.spec.readinessGates.length) : '<none>', 1)],
  Deployment: [NAME, col('Ready', 'string', replicasOf), col('Up-to-date', 'integer', (o) => o.status?.updatedReplicas ?? 0),
    col('Available', 'integer', (o) => o.status?.availableReplicas ?? 0), AGE, col('Containers', 'string', containers, 1),
    col('Images', 'string', images, 1), col('Selector', 'string', selector, 1)],
  ReplicaSet: [NAME, col('Desired', 'integer', (o) => o.spec?.replicas ?? 0), col('Current', 'integer', (o) => o.status?.replicas ?? 0),
    col('Ready', 'integer', (o) => o.status?.readyReplicas ?? 0), AGE, col('Containers', 'string', containers, 1), col('Images', 'string', images, 1), col('Selector', 'string', selector, 1)],
  StatefulSet: [NAME, col('Ready', 'string', replicasOf), AGE, col('Containers', 'string', containers, 1), col('Images', 'string', images, 1)],
  DaemonSet: [NAME, col('Desired', 'integer', (o) => o.status?.desiredNumberScheduled ?? 0), col('Current', 'integer', (o) => o.status?.currentNumberScheduled ?? 0),
    col('Ready', 'integer', (o) => o.status?.numberReady ?? 0), col('Up-to-date', 'integer', (o) => o.status?.updatedNumberScheduled ?? 0),
    col('Available', 'integer', (o) => o.status?.numberAvailable ?? 0), col('Node Selector', 'string', (o) => Object.entries(o.spec?.template?.spec?.nodeSelector ?? {}).map(([k, v]) => `${k}=${v}`).join(',') || '<none>'), AGE],
  Service: [NAME, col('Type', 'string', (o) => o.spec?.type ?? 'ClusterIP'), col('Cluster-IP', 'string', (o) => o.spec?.clusterIP ?? '<none>'),
    col('External-IP', 'string', (o) => (o.spec?.externalIPs ?? []).join(',') || (o.spec?.externalName ?? '<none>')), col('Port(s)', 'string', ports), AGE,
    col('Selector', 'string', (o) => Object.entries(o.spec?.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(',') || '<none>', 1)],
  Namespace: [NAME, col('Status', 'string', (o) => o.status?.phase ?? ''), AGE],
  ConfigMap: [NAME, col('Data', 'integer', (o) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length), AGE],
  Secret: [NAME, col('Type', 'string', (o) => o.type ?? ''), col('Data', 'integer', (o) => Object.keys(o.data ?? {}).length), AGE],
  Node: [NAME, col('Status', 'string', nodeStatus),
    col('Roles', 'string', () => '<none>'), AGE, col('Version', 'string', (o) => o.status?.nodeInfo?.kubeletVersion ?? '')],
  Job: [NAME, col('Status', 'string', (o) => (o.status?.succeeded ?? 0) >= (o.spec?.completions ?? 1) ? 'Complete' : 'Running'),
    col('Completions', 'string', (o) => `${o.status?.succeeded ?? 0}/${o.spec?.completions ?? 1}`), col('Duration', 'string', () => ''), AGE],
  CertificateSigningRequest: [NAME, AGE, col('SignerName', 'string', (o) => o.spec?.signerName || '<none>'),
    col('Requestor', 'string', (o) => o.spec?.username ?? ''),
    col('RequestedDuration', 'string', (o) => (typeof o.spec?.expirationSeconds === 'number' ? humanDuration(o.spec.expirationSeconds) : '<none>')),
    col('Condition', 'string', csrCondition)],
  Lease: [NAME, col('Holder', 'string', (o) => o.spec?.holderIdentity ?? ''), AGE],
  // core v1 and events.<domain>/v1 (regarding, note, deprecated*) Events print alike, as upstream's one printer
  Event: [col('Last Seen', 'string', (o, now) => age(o.series?.lastObservedTime ?? o.lastTimestamp ?? o.deprecatedLastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp, now)),
    col('Type', 'string', (o) => o.type ?? ''), col('Reason', 'string', (o) => o.reason ?? ''),
    col('Object', 'string', (o) => { const r = o.involvedObject ?? o.regarding; return `${String(r?.kind ?? '').toLowerCase()}/${r?.name ?? ''}`; }),
    col('Message', 'string', (o) => o.message ?? o.note ?? '')],
};

/** upstream printNode: Ready / NotReady (False or Unknown) / Unknown (no Ready condition), then SchedulingDisabled */
function nodeStatus(o: any): string {
  const ready = (Array.isArray(o.status?.conditions) ? o.status.conditions : []).find((c: any) => c?.type === 'Ready');
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (o.spec?.unschedulable === true) status.push('SchedulingDisabled');
  return status.join(',');
}

const DEFAULT: Column[] = [NAME, col('Created At', 'date', (o) => o.metadata?.creationTimestamp ?? null, 0, '', 'CreationTimestamp is a timestamp representing the server time when this object was created.')];

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Columns of custom resources (CRD additionalPrinterColumns), by `<apiVersion>/<kind>`. */
const CUSTOM = new Map<string, Column[]>();

/** Registers (or with undefined, removes) the columns of a custom resource version. */
export function setCustomColumns(apiVersion: string, kind: string, columns: Column[] | undefined): void {
  if (columns) CUSTOM.set(`${apiVersion}/${kind}`, columns); else CUSTOM.delete(`${apiVersion}/${kind}`);
}

/** The columns for `kind` (a custom key `<apiVersion>/<kind>` or a built-in kind), else by the first object's identity. */
function columnsFor(kind: string, first: any): Column[] {
  return CUSTOM.get(kind) ?? (first ? CUSTOM.get(`${first.apiVersion}/${first.kind}`) : undefined) ?? COLUMNS[kind] ?? DEFAULT;
}

/** A column of a CRD's additionalPrinterColumns (cells from a simple JSONPath). */
export function printerColumn(c: { name: string; type: string; format?: string; description?: string; priority?: number; jsonPath: string }): Column {
  const type = (['string', 'integer', 'date', 'number', 'boolean'].includes(c.type) ? c.type : 'string') as Column['type'];
  // upstream's tableconvertor prints date columns as the age of the timestamp
  const cell: Column['cell'] = type === 'date' ? (o, now) => { const v = cellAt(o, c.jsonPath, 'string'); return typeof v === 'string' ? age(v, now) : v; } : (o) => cellAt(o, c.jsonPath, c.type);
  return { name: c.name, type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0, cell };
}

/** The customresource table convertor: Name, the printer columns, and Age when there are none. */
export function customColumns(printer: Parameters<typeof printerColumn>[0][]): Column[] {
  const cols = printer.map(printerColumn);
  if (!cols.length) cols.push(col('Age', 'date', (o, now) => age(o.metadata?.creationTimestamp, now), 0, '', 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata'));
  return [NAME, ...cols];
}

/** Evaluates `.a.b[0].c` and `[?(@.k=="v")]` filters; objects and lists print as JSON, absence as null. */
function cellAt(o: any, path: string, type: string): Cell {
  let cur: any[] = [o];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\[\?\(@\.([^=!]+)(==|!=)"?([^")]*)"?\)\]|\[\*\]/g;
  const inner = path.replace(/^\{/, '').replace(/\}$/, '');
  let m: RegExpExecArray | null;
  while ((m = re.exec(inner)) !== null) {
    const [, field, index, fk, op, fv] = m;
    const next: any[] = [];
    for (const v of cur) {
      if (v === null || typeof v !== 'object') continue;
      if (field !== undefined) { if (v[field] !== undefined) next.push(v[field]); }
      else if (index !== undefined) { if (Array.isArray(v) && v[Number(index)] !== undefined) next.push(v[Number(index)]); }
      else if (fk !== undefined) { if (Array.isArray(v)) next.push(...v.filter((x) => x && (String(x[fk]) === fv) === (op === '=='))); }
      else if (Array.isArray(v)) next.push(...v);
    }
    cur = next;
  }
  if (!cur.length || cur[0] === undefined) return null;
  const v = cur.length === 1 ? cur[0] : cur;
  if (v === null || typeof v === 'object') return JSON.stringify(v);
  if (type === 'string' && typeof v !== 'string') return String(v);
  return v as Cell;
}

export function partialObjectMetadata(obj: any, metaGroupVersion: string): any {
  return { kind: 'PartialObjectMetadata', apiVersion: metaGroupVersion, metadata: obj.metadata };
}

/** Renders objects as a Table of the given meta group version (e.g. meta.plat.io/v1). */
export function toTable(kind: string, objs: any[], listMeta: Record<string, unknown>, metaGroupVersion: string, include: IncludeObject, now: number): any {
  const cols = columnsFor(kind, objs[0]);
  return {
    kind: 'Table', apiVersion: metaGroupVersion, metadata: listMeta,
    columnDefinitions: cols.map(({ name, type, format, description, priority }) => ({ name, type, format, description, priority })),
    rows: objs.map((o) => {
      const row: Record<string, unknown> = { cells: cols.map((c) => c.cell(o, now)) };
      if (include === 'Metadata') row.object = partialObjectMetadata(o, metaGroupVersion);
      else if (include === 'Object') row.object = o;
      return row;
    }),
  };
}

/** The Accept `as=` view of objects: a Table, one PartialObjectMetadata, or a list of them. */
export function renderView(kind: string, objs: any[], listMeta: Record<string, unknown>, view: { as: string; groupVersion: string; includeObject: IncludeObject }, now: number, isList: boolean): any {
  if (view.as === 'Table') return toTable(kind, objs, listMeta, view.groupVersion, view.includeObject, now);
  if (view.as === 'PartialObjectMetadata' && !isList) return partialObjectMetadata(objs[0], view.groupVersion);
  return { kind: 'PartialObjectMetadataList', apiVersion: view.groupVersion, metadata: listMeta, items: objs.map((o) => partialObjectMetadata(o, view.groupVersion)) };
}

/** A stored object as the Table list path sees it: its JSON and its metadata's JSON, kept once computed. */
export interface TableEntry { obj: any; json: string; metaJson?: string }

/**
 * A JSON Table of a list built as a string join, like JSON lists: the cells are computed per
 * request (Age moves with the clock) but each row's PartialObjectMetadata reuses the metadata
 * JSON cached on the entry. Same document as JSON.stringify(toTable(...)).
 */
export function tableJson(kind: string, entries: TableEntry[], listMeta: Record<string, unknown>, metaGroupVersion: string, include: IncludeObject, now: number): string {
  const cols = columnsFor(kind, entries[0]?.obj);
  const defs = JSON.stringify(cols.map(({ name, type, format, description, priority }) => ({ name, type, format, description, priority })));
  const pomHead = `{"kind":"PartialObjectMetadata","apiVersion":${JSON.stringify(metaGroupVersion)},"metadata":`;
  const rows = entries.map((e) => {
    const cells = JSON.stringify(cols.map((c) => c.cell(e.obj, now)));
    if (include === 'None') return `{"cells":${cells}}`;
    if (include === 'Object') return `{"cells":${cells},"object":${e.json}}`;
    if (e.obj.metadata === undefined) return `{"cells":${cells},"object":{"kind":"PartialObjectMetadata","apiVersion":${JSON.stringify(metaGroupVersion)}}}`;
    return `{"cells":${cells},"object":${pomHead}${e.metaJson ??= JSON.stringify(e.obj.metadata)}}}`;
  });
  return `{"kind":"Table","apiVersion":${JSON.stringify(metaGroupVersion)},"metadata":${JSON.stringify(listMeta)},"columnDefinitions":${defs},"rows":[${rows.join(',')}]}`;
}

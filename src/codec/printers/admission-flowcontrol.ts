/**
 * Admission configuration, API priority and fairness, and apiserver-internal kinds as upstream
 * shows them: webhook configurations, (Validating|Mutating)AdmissionPolicy and their bindings,
 * FlowSchema (rows in matching order), PriorityLevelConfiguration, StorageVersion,
 * StorageVersionMigration and the aggregator's APIService.
 */
import type { APIService, FlowSchema, PriorityLevelConfiguration, PriorityLevelSpec } from '../../api/kinds.js';
import type { KubeObject, LabelSelector } from '../../api/object.js';
import type {
  AdmissionPolicy,
  AdmissionPolicyBinding,
  StorageVersion,
  StorageVersionMigration,
  WebhookConfiguration,
} from '../../api/printable.js';
import { AGE, NAME, asList, col, condition, listWithMore, type CellOf, type Column } from './common.js';

const WEBHOOKS_DOC = 'Webhooks indicates the number of webhooks registered in this configuration';
const webhookColumns = (): Column<WebhookConfiguration>[] => [
  NAME,
  col('Webhooks', 'integer', (o) => asList(o.webhooks).length, 0, '', WEBHOOKS_DOC),
  AGE,
];

const paramKind = (o: KubeObject<{ paramKind?: { apiVersion?: string; kind?: string } }>): string =>
  o.spec?.paramKind ? `${o.spec.paramKind.apiVersion ?? ''}/${o.spec.paramKind.kind ?? ''}` : '<unset>';

/** Go's %v of a string slice: `[a b]`. */
const goSlice = (v: unknown): string => `[${asList(v).join(' ')}]`;

/** The generated Go String() of a metav1.LabelSelector, which upstream prints for a selector paramRef. */
export function goLabelSelector(sel: LabelSelector | undefined): string {
  const labels = Object.keys(sel?.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${sel!.matchLabels![k]},`)
    .join('');
  const exprs = asList(sel?.matchExpressions)
    .map(
      (e) =>
        `LabelSelectorRequirement{Key:${e?.key ?? ''},Operator:${e?.operator ?? ''},Values:${goSlice(e?.values)},},`,
    )
    .join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

/** A policy binding's param reference: `namespace/name`, `*\/name` without a namespace, or its selector. */
export function paramRef(
  o: KubeObject<{ paramRef?: { name?: string; namespace?: string; selector?: LabelSelector } }>,
): string {
  const pr = o.spec?.paramRef;
  if (!pr) return '<unset>';
  if (pr.name) return pr.namespace ? `${pr.namespace}/${pr.name}` : `*/${pr.name}`;
  return pr.selector ? goLabelSelector(pr.selector) : '<unset>';
}

const bindingColumns = (): Column<AdmissionPolicyBinding>[] => [
  NAME,
  col(
    'PolicyName',
    'string',
    (o) => o.spec?.policyName ?? '',
    0,
    '',
    'PolicyName indicates the policy definition which the policy binding binded to',
  ),
  col('ParamRef', 'string', paramRef, 0, '', 'ParamRef indicates the param resource which sets the configration param'),
  AGE,
];

/** The limited configuration of a priority level (v1beta1/v1beta2 name its shares assuredConcurrencyShares). */
type Limited = NonNullable<PriorityLevelSpec['limited']> & { assuredConcurrencyShares?: number };
const limited = (o: PriorityLevelConfiguration): Limited | undefined => o.spec?.limited;

function plcCells(o: PriorityLevelConfiguration): {
  shares: string | number;
  queues: string | number;
  handSize: string | number;
  queueLengthLimit: string | number;
} {
  const l = limited(o);
  if (!l) return { shares: '<none>', queues: '<none>', handSize: '<none>', queueLengthLimit: '<none>' };
  const shares = l.nominalConcurrencyShares ?? l.assuredConcurrencyShares ?? 0;
  const q = l.limitResponse?.queuing;
  if (!q) return { shares, queues: '<none>', handSize: '<none>', queueLengthLimit: '<none>' };
  return { shares, queues: q.queues ?? 0, handSize: q.handSize ?? 0, queueLengthLimit: q.queueLengthLimit ?? 0 };
}

/** upstream FlowSchemaSequence: lower matchingPrecedence first, then by name. */
export function flowSchemaOrder(a: FlowSchema | undefined, b: FlowSchema | undefined): number {
  const pa = a?.spec?.matchingPrecedence ?? 0,
    pb = b?.spec?.matchingPrecedence ?? 0;
  if (pa !== pb) return pa - pb;
  const na = a?.metadata?.name ?? '',
    nb = b?.metadata?.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

function apiServiceAvailable(o: APIService): string {
  const c = condition(o, 'Available');
  if (!c) return 'Unknown';
  if (c.status === 'True' || !c.reason) return String(c.status ?? '');
  return `${c.status} (${c.reason})`;
}

const lit = <T extends KubeObject>(name: string, type: Column['type'], cell: CellOf<T>, description: string) =>
  col(name, type, cell, 0, '', description);

export const ADMISSION_FLOWCONTROL_COLUMNS: Record<string, Column[]> = {
  MutatingWebhookConfiguration: webhookColumns(),
  ValidatingWebhookConfiguration: webhookColumns(),
  ValidatingAdmissionPolicy: [
    NAME,
    lit(
      'Validations',
      'integer',
      (o) => asList(o.spec?.validations).length,
      'Validations indicates the number of validation rules defined in this configuration',
    ),
    lit('ParamKind', 'string', paramKind, 'ParamKind specifies the kind of resources used to parameterize this policy'),
    AGE,
  ] satisfies Column<AdmissionPolicy>[],
  ValidatingAdmissionPolicyBinding: bindingColumns(),
  MutatingAdmissionPolicy: [
    NAME,
    lit(
      'Mutations',
      'integer',
      (o) => asList(o.spec?.mutations).length,
      'Mutation indicates the number of mutations rules defined in this configuration',
    ),
    lit('ParamKind', 'string', paramKind, 'ParamKind specifies the kind of resources used to parameterize this policy'),
    AGE,
  ] satisfies Column<AdmissionPolicy>[],
  MutatingAdmissionPolicyBinding: bindingColumns(),
  FlowSchema: [
    NAME,
    col('PriorityLevel', 'string', (o) => o.spec?.priorityLevelConfiguration?.name ?? ''),
    col('MatchingPrecedence', 'string', (o) => o.spec?.matchingPrecedence ?? 0),
    col('DistinguisherMethod', 'string', (o) => o.spec?.distinguisherMethod?.type ?? '<none>'),
    AGE,
    lit(
      'MissingPL',
      'string',
      (o) => condition(o, 'Dangling')?.status ?? '?',
      'references a broken or non-existent PriorityLevelConfiguration',
    ),
  ] satisfies Column<FlowSchema>[],
  PriorityLevelConfiguration: [
    NAME,
    col('Type', 'string', (o) => o.spec?.type ?? ''),
    col('NominalConcurrencyShares', 'string', (o) => plcCells(o).shares),
    col('Queues', 'string', (o) => plcCells(o).queues),
    col('HandSize', 'string', (o) => plcCells(o).handSize),
    col('QueueLengthLimit', 'string', (o) => plcCells(o).queueLengthLimit),
    AGE,
  ] satisfies Column<PriorityLevelConfiguration>[],
  StorageVersion: [
    NAME,
    col('CommonEncodingVersion', 'string', (o) => o.status?.commonEncodingVersion ?? '<unset>'),
    col('StorageVersions', 'string', (o) =>
      listWithMore(
        asList(o.status?.storageVersions).map((sv) => `${sv?.apiServerID ?? ''}=${sv?.encodingVersion ?? ''}`),
      ),
    ),
    AGE,
  ] satisfies Column<StorageVersion>[],
  // upstream's Name column of this kind has no name format
  StorageVersionMigration: [
    { ...NAME, format: '' },
    lit(
      'Resource',
      'string',
      (o) => `${o.spec?.resource?.resource ?? ''}.${o.spec?.resource?.version ?? ''}.${o.spec?.resource?.group ?? ''}`,
      'Fully qualified resource to migrate',
    ),
  ] satisfies Column<StorageVersionMigration>[],
  APIService: [
    NAME,
    lit(
      'Service',
      'string',
      (o) => (o.spec?.service ? `${o.spec.service.namespace ?? ''}/${o.spec.service.name ?? ''}` : 'Local'),
      'The reference to the service that hosts this API endpoint.',
    ),
    lit('Available', 'string', apiServiceAvailable, 'Whether this service is available.'),
    AGE,
  ] satisfies Column<APIService>[],
};

/** Kinds whose list rows upstream sorts before printing. */
export const ROW_ORDER: Record<string, (a: FlowSchema, b: FlowSchema) => number> = { FlowSchema: flowSchemaOrder };

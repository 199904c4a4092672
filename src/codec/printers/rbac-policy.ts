/**
 * RBAC bindings, policy, scheduling, node, certificates and coordination kinds as upstream's
 * printers show them. Role and ClusterRole have no printer upstream: they use the default
 * Name / Created At table, as every kind without columns here.
 */
import type { CertificateSigningRequest, Lease, PodDisruptionBudget, RoleBinding } from '../../api/kinds.js';
import { conditionsOf, type KubeObject } from '../../api/object.js';
import type { ClusterTrustBundle, LeaseCandidate, PriorityClass, RuntimeClass } from '../../api/printable.js';
import { AGE, NAME, asList, col, humanDuration, intOrString, wide, type CellOf, type Column } from './common.js';

/** rbac.SubjectsStrings: users, groups and `namespace/name` service accounts, each `, `-joined. */
export function subjects(o: { subjects?: unknown }): { users: string; groups: string; serviceAccounts: string } {
  const users: string[] = [],
    groups: string[] = [],
    sas: string[] = [];
  for (const s of asList(o.subjects) as ({ kind?: string; name: string; namespace?: string } | undefined)[]) {
    if (s?.kind === 'User') users.push(s.name);
    else if (s?.kind === 'Group') groups.push(s.name);
    else if (s?.kind === 'ServiceAccount') sas.push(`${s.namespace ?? ''}/${s.name}`);
  }
  return { users: users.join(', '), groups: groups.join(', '), serviceAccounts: sas.join(', ') };
}

function bindingColumns(what: string): Column<RoleBinding>[] {
  return [
    NAME,
    col(
      'Role',
      'string',
      (o) => `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}`,
      0,
      '',
      'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.',
    ),
    AGE,
    wide('Users', 'string', (o) => subjects(o).users, `Users in the ${what}`),
    wide('Groups', 'string', (o) => subjects(o).groups, `Groups in the ${what}`),
    wide('ServiceAccounts', 'string', (o) => subjects(o).serviceAccounts, `ServiceAccounts in the ${what}`),
  ];
}

/** upstream extractCSRStatus: Denied, Approved or Pending, then ,Failed and ,Issued. */
function csrCondition(o: CertificateSigningRequest): string {
  const types = new Set(conditionsOf(o).map((c) => c?.type));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (o.status?.certificate) s += ',Issued';
  return s;
}

const lit = <T extends KubeObject>(name: string, type: Column['type'], cell: CellOf<T>, description: string) =>
  col(name, type, cell, 0, '', description);

export const RBAC_POLICY_COLUMNS: Record<string, Column[]> = {
  RoleBinding: bindingColumns('roleBinding'),
  ClusterRoleBinding: bindingColumns('clusterRoleBinding'),
  PodDisruptionBudget: [
    NAME,
    lit(
      'Min Available',
      'string',
      (o) =>
        o.spec?.minAvailable !== undefined && o.spec.minAvailable !== null ? intOrString(o.spec.minAvailable) : 'N/A',
      'The minimum number of pods that must be available.',
    ),
    lit(
      'Max Unavailable',
      'string',
      (o) =>
        o.spec?.maxUnavailable !== undefined && o.spec.maxUnavailable !== null
          ? intOrString(o.spec.maxUnavailable)
          : 'N/A',
      'The maximum number of pods that may be unavailable.',
    ),
    lit(
      'Allowed Disruptions',
      'integer',
      (o) => o.status?.disruptionsAllowed ?? 0,
      'Calculated number of pods that may be disrupted at this time.',
    ),
    AGE,
  ] satisfies Column<PodDisruptionBudget>[],
  PriorityClass: [
    NAME,
    col('Value', 'integer', (o) => o.value ?? 0),
    col('Global-Default', 'boolean', (o) => o.globalDefault === true),
    AGE,
    col('PreemptionPolicy', 'string', (o) => o.preemptionPolicy ?? ''),
  ] satisfies Column<PriorityClass>[],
  RuntimeClass: [NAME, col('Handler', 'string', (o) => o.handler ?? ''), AGE] satisfies Column<RuntimeClass>[],
  CertificateSigningRequest: [
    NAME,
    AGE,
    col('SignerName', 'string', (o) => o.spec?.signerName || '<none>'),
    col('Requestor', 'string', (o) => o.spec?.username ?? ''),
    col('RequestedDuration', 'string', (o) =>
      typeof o.spec?.expirationSeconds === 'number' ? humanDuration(o.spec.expirationSeconds) : '<none>',
    ),
    col('Condition', 'string', csrCondition),
  ] satisfies Column<CertificateSigningRequest>[],
  ClusterTrustBundle: [
    NAME,
    col('SignerName', 'string', (o) => o.spec?.signerName || '<none>'),
  ] satisfies Column<ClusterTrustBundle>[],
  Lease: [NAME, col('Holder', 'string', (o) => o.spec?.holderIdentity ?? ''), AGE] satisfies Column<Lease>[],
  LeaseCandidate: [
    NAME,
    col('LeaseName', 'string', (o) => o.spec?.leaseName ?? ''),
    col('BinaryVersion', 'string', (o) => o.spec?.binaryVersion ?? ''),
    col('EmulationVersion', 'string', (o) => o.spec?.emulationVersion ?? ''),
    AGE,
  ] satisfies Column<LeaseCandidate>[],
};

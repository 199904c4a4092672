/**
 * POST pods/NAME/eviction (policy/v1 Eviction) on the front thread, as upstream's eviction
 * REST: PDBs may live in another shard than pods, so the handler reads the pod and the
 * namespace's budgets through actor ops, decrements the one matching budget through its
 * status subresource (resourceVersion-checked, retried on conflict) and then deletes the pod
 * with a uid precondition.
 * - a pod Pending, Succeeded, Failed or already deleting ignores budgets;
 * - no matching budget: plain delete; more than one: 500 as upstream;
 * - a Running pod that is not Ready may go without spending the budget when the budget is
 *   healthy (IfHealthyBudget, the default) or the policy is AlwaysAllow;
 * - disruptionsAllowed 0 (or a budget not yet observed): 429 with a DisruptionBudget cause.
 * The reply is 201 with a Success Status.
 */
import type { PdbStatus, Pod, PodDisruptionBudget } from '../api/kinds.js';
import { fieldAt, isRecord, type Stored } from '../api/object.js';
import { errors, type Status } from '../api/status.js';
import { bodyText } from '../actors/pack.js';
import type { DeleteOptions, Result, TypeRef } from '../actors/protocol.js';
import { labelSelectorFromObject } from '../api/selectors.js';
import { send, sendStatus } from '../http/exchange.js';
import { toDeleteOptions } from '../registry/deletion.js';
import { disruptionCondition } from '../registry/disruption-status.js';
import type { Body } from '../actors/protocol.js';
import type { Request, Services } from '../http/context.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const PODS: TypeRef = { group: '', version: 'v1', resource: 'pods' };
const PDBS: TypeRef = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' };
const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";
/** upstream MaxDisruptedPodSize */
const MAX_DISRUPTED_PODS = 2000;
const CONFLICT_RETRIES = 5;

class Reply {
  constructor(readonly status: Status) {}
}

function fail(s: Status): never {
  throw new Reply(s);
}
/** The body of a store reply (the caller knows the kind it asked for), or the refusal. */
function unwrap(r: Result): unknown {
  if ('error' in r) fail(r.error);
  if (!('code' in r)) fail(errors.internal('unexpected reply').status);
  return JSON.parse(bodyText(r.body));
}

function tooManyRequests(cause: string, retryAfterSeconds: number): Status {
  const details: Status['details'] = { causes: [{ reason: 'DisruptionBudget', message: cause }] };
  if (retryAfterSeconds) details.retryAfterSeconds = retryAfterSeconds;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: VIOLATION,
    reason: 'TooManyRequests',
    details,
    code: 429,
  };
}

function podReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c?.type === 'Ready' && c.status === 'True');
}

/** upstream canIgnorePDB */
function canIgnoreBudgets(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata?.deletionTimestamp;
}

export async function evict(r: Request, s: Services, body: Body, queryDryRun: boolean): Promise<void> {
  try {
    await run(r, s, body, queryDryRun);
    send(
      r.x,
      201,
      'application/json',
      JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }) + '\n',
    );
  } catch (e) {
    if (e instanceof Reply) return sendStatus(r.x, e.status, r.enc.pretty);
    throw e;
  }
}

/** The Eviction body: checked against the URL; its DeleteOptions validated. */
function evictionOptions(r: Request, body: Body): DeleteOptions {
  if (body.contentType !== 'json') fail(errors.unsupportedMediaType(body.contentType).status);
  let eviction: unknown;
  try {
    eviction = JSON.parse(body.text);
  } catch (e) {
    fail(errors.badRequest(`error decoding Eviction: ${(e as Error).message}`).status);
  }
  if (!isRecord(eviction)) fail(errors.badRequest('Eviction must be an object').status);
  const ns = r.info.namespace;
  const name = r.info.name;
  const evictionName = fieldAt(eviction, 'metadata', 'name');
  const evictionNamespace = fieldAt(eviction, 'metadata', 'namespace');
  if (evictionName !== undefined && evictionName !== name)
    fail(errors.badRequest('name in URL does not match name in Eviction object').status);
  if (evictionNamespace && evictionNamespace !== ns)
    fail(errors.badRequest('namespace in URL does not match namespace in Eviction object').status);
  const o = eviction.deleteOptions ?? {};
  try {
    return toDeleteOptions(o);
  } catch (e) {
    fail((e as { status: Status }).status);
  }
}

async function run(r: Request, s: Services, body: Body, queryDryRun: boolean): Promise<void> {
  const ns = r.info.namespace;
  const name = r.info.name;
  const options = evictionOptions(r, body);
  const dryRun = queryDryRun || (options.dryRun?.length ?? 0) > 0;

  for (let attempt = 0; ; attempt++) {
    const pod = unwrap(
      await s.pool.submit({ op: 'get', type: PODS, enc: JSON_ENC, namespace: ns, name }),
    ) as Stored<Pod>;
    if (!canIgnoreBudgets(pod)) {
      const list = unwrap(await s.pool.submit({ op: 'list', type: PDBS, enc: JSON_ENC, namespace: ns, opts: {} }));
      const pdbs = (list as { items?: Stored<PodDisruptionBudget>[] }).items ?? [];
      const matching = pdbs.filter((p) => {
        const sel = labelSelectorFromObject(p.spec?.selector);
        return !sel.empty && !sel.matchesNothing && sel.matches(pod.metadata.labels);
      });
      if (matching.length > 1)
        fail(
          errors.internal(
            'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
          ).status,
        );
      if (matching.length === 1) {
        const outcome = await spend(s, matching[0]!, pod, dryRun);
        if (outcome === 'conflict') {
          if (attempt + 1 < CONFLICT_RETRIES) continue;
          fail(
            errors.conflict(
              { resource: 'poddisruptionbudgets', group: 'policy', name: matching[0]!.metadata.name },
              'the object has been modified; please apply your changes to the latest version and try again',
            ).status,
          );
        }
      }
    }
    const del: DeleteOptions = { ...options, preconditions: options.preconditions ?? { uid: pod.metadata.uid } };
    unwrap(await s.pool.submit({ op: 'delete', type: PODS, enc: JSON_ENC, dryRun, namespace: ns, name, options: del }));
    return;
  }
}

/** upstream checkAndDecrement (plus the unhealthy-pod policy): 'ok', 'conflict', or throws the refusal. */
async function spend(
  s: Services,
  pdb: Stored<PodDisruptionBudget>,
  pod: Stored<Pod>,
  dryRun: boolean,
): Promise<'ok' | 'conflict'> {
  const st: PdbStatus = pdb.status ?? {};
  if (!podReady(pod)) {
    if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return 'ok';
    if ((st.currentHealthy ?? 0) >= (st.desiredHealthy ?? 0) && (st.desiredHealthy ?? 0) > 0) return 'ok';
  }
  const name = pdb.metadata.name;
  if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0))
    fail(tooManyRequests(`The disruption budget ${name} is still being processed by the server.`, 10));
  const allowed = st.disruptionsAllowed ?? 0;
  if (allowed < 0)
    fail(
      errors.forbidden(`poddisruptionbudgets.policy "${name}" is forbidden: pdb disruptions allowed is negative`, {
        group: 'policy',
        kind: 'poddisruptionbudgets',
        name,
      }).status,
    );
  if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
    fail(
      errors.forbidden(
        `poddisruptionbudgets.policy "${name}" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`,
        { group: 'policy', kind: 'poddisruptionbudgets', name },
      ).status,
    );
  }
  if (allowed === 0)
    fail(
      tooManyRequests(
        `The disruption budget ${name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently`,
        0,
      ),
    );
  if (dryRun) return 'ok';
  const now = Date.now();
  const status = { ...st, disruptionsAllowed: allowed - 1 };
  if (status.disruptionsAllowed === 0) status.conditions = disruptionCondition(st.conditions, 0, now);
  status.disruptedPods = {
    ...(st.disruptedPods ?? {}),
    [pod.metadata.name]: new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
  };
  const res = await s.pool.submit({
    op: 'update',
    type: { ...PDBS, subresource: 'status' },
    enc: JSON_ENC,
    dryRun: false,
    namespace: pdb.metadata.namespace ?? '', // always set: PDBs are namespaced
    name,
    fieldManager: 'eviction',
    body: { text: JSON.stringify({ ...pdb, status }), contentType: 'json' },
  });
  if ('error' in res && res.error.code === 409) return 'conflict';
  unwrap(res);
  return 'ok';
}

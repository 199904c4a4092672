/**
 * The pod subresources that reach past the API server: `binding` (the scheduler's write of
 * spec.nodeName, once) and the node-agent connections (log, exec, attach, portforward, proxy).
 * The listeners serve those on the front thread (src/handlers/connect.ts, which dials the node
 * agents); connectPod is only the actor's answer should one ever reach it.
 */
import type { Binding, Pod } from '../../api/kinds.js';
import type { Stored } from '../../api/object.js';
import { errors } from '../../api/status.js';
import { notSupported, required, type Cause } from './field-errors.js';

export const BINDING_SUCCESS = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };

/** BindingREST.Create: validates the Binding, then sets spec.nodeName and PodScheduled=True. */
export function bindPod(binding: Binding, pod: Stored<Pod>, now: number): { next: Stored<Pod>; reply: unknown } {
  const name = pod.metadata.name;
  const meta = binding.metadata ?? {};
  if (meta.name && meta.name !== name) throw errors.badRequest('name in URL does not match name in Binding object');
  const target = binding.target ?? {};
  const causes: Cause[] = [];
  if (target.kind && target.kind !== 'Node') causes.push(notSupported('target.kind', target.kind, ['Node', '<empty>']));
  if (!target.name) causes.push(required('target.name'));
  if (causes.length) throw errors.invalid({ kind: 'Binding', name }, causes);
  const conflict = (why: string) => errors.conflict({ resource: 'pods/binding', name }, why);
  if (meta.uid && meta.uid !== pod.metadata.uid)
    throw conflict(`Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${pod.metadata.uid}`);
  if (pod.metadata.deletionTimestamp) throw conflict(`pod ${name} is being deleted, cannot be assigned to a host`);
  if (pod.spec?.nodeName)
    throw conflict(`pod ${name} is already assigned to node ${JSON.stringify(pod.spec.nodeName)}`);
  if (pod.spec?.schedulingGates?.length) throw conflict(`pod ${name} has non-empty .spec.schedulingGates`);
  const next = structuredClone(pod);
  next.spec = { ...(next.spec ?? {}), nodeName: target.name };
  if (meta.annotations) next.metadata.annotations = { ...(next.metadata.annotations ?? {}), ...meta.annotations };
  const status = (next.status ??= {});
  const conditions = (status.conditions ?? []).filter((c) => c?.type !== 'PodScheduled');
  const at = new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  status.conditions = [
    ...conditions,
    { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: at },
  ];
  return { next, reply: BINDING_SUCCESS };
}

/**
 * GET (or another verb) on a connection subresource. `log` of an unscheduled pod is empty, as
 * upstream (no location); exec/attach/portforward need a host; proxy needs the pod's IP.
 * Returns undefined for subresources that are plain views of the pod.
 */
export function connectPod(sub: string, pod: Stored<Pod>): string | undefined {
  const name = pod.metadata.name;
  const node = pod.spec?.nodeName;
  const noAgent = () =>
    errors.serviceUnavailable(`no node agent is connected for pod ${name} (node ${JSON.stringify(node)})`);
  switch (sub) {
    case 'log':
      if (!node) return '';
      throw noAgent();
    case 'exec':
    case 'attach':
    case 'portforward':
      if (!node) throw errors.badRequest(`pod ${name} does not have a host assigned`);
      throw noAgent();
    case 'proxy':
      if (!pod.status?.podIP) throw errors.badRequest('address not allowed');
      throw errors.serviceUnavailable(`error trying to reach service: no node agent is connected for pod ${name}`);
    default:
      return undefined;
  }
}

/**
 * The per-kind strategies, keyed by `<group>/<resource>` in the reference domain.
 * Kinds not listed use DEFAULT_STRATEGY.
 */
import { errors } from '../../api/status.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { namespaceStrategy } from './namespaces.js';
import { podStrategy } from './pods.js';
import { immutableDataStrategy } from './configmaps.js';
import { serviceStrategy } from './services.js';
import {
  daemonSetStrategy,
  deploymentStrategy,
  replicaSetStrategy,
  replicationControllerStrategy,
  statefulSetStrategy,
} from './workloads.js';
import { cronJobStrategy, jobStrategy } from './jobs.js';
import { clusterRoleBindingStrategy, clusterRoleStrategy, roleBindingStrategy, roleStrategy } from './rbac.js';
import { ingressStrategy } from './ingress.js';
import { mutatingWebhookStrategy, validatingWebhookStrategy } from './webhooks.js';
import { csrStrategy } from './csr.js';
import { eventStrategy } from './events.js';
import { pdbStrategy } from './pdb.js';
import { pvcStrategy } from './pvc.js';
import { leaseStrategy } from './leases.js';
import { flowSchemaStrategy, priorityLevelStrategy } from './flowcontrol.js';
import { crdStrategy } from './crds.js';
import { apiServiceStrategy } from './apiservices.js';
import { hpaStrategy } from './hpa.js';

const createOnUpdate: ResourceStrategy = { ...DEFAULT_STRATEGY, allowCreateOnUpdate: true };

/** Nodes: nodes/proxy reaches the node agent, which is never connected here. */
const nodeStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  getSubresource(name, obj) {
    if (name !== 'proxy') return undefined;
    throw errors.serviceUnavailable(`no node agent is connected for node ${JSON.stringify(obj.metadata.name)}`);
  },
};

const STRATEGIES: Record<string, ResourceStrategy> = {
  '/namespaces': namespaceStrategy,
  'apiregistration.plat.io/apiservices': apiServiceStrategy,
  '/pods': podStrategy,
  '/nodes': nodeStrategy,
  '/configmaps': immutableDataStrategy,
  '/secrets': immutableDataStrategy,
  '/services': serviceStrategy,
  '/persistentvolumeclaims': pvcStrategy,
  '/replicationcontrollers': replicationControllerStrategy,
  '/endpoints': createOnUpdate,
  '/events': eventStrategy,
  '/limitranges': createOnUpdate,
  'apps/deployments': deploymentStrategy,
  'apps/replicasets': replicaSetStrategy,
  'apps/statefulsets': statefulSetStrategy,
  'apps/daemonsets': daemonSetStrategy,
  'batch/jobs': jobStrategy,
  'batch/cronjobs': cronJobStrategy,
  'autoscaling/horizontalpodautoscalers': hpaStrategy,
  'policy/poddisruptionbudgets': pdbStrategy,
  'networking.plat.io/ingresses': ingressStrategy,
  'admissionregistration.plat.io/validatingwebhookconfigurations': validatingWebhookStrategy,
  'admissionregistration.plat.io/mutatingwebhookconfigurations': mutatingWebhookStrategy,
  'certificates.plat.io/certificatesigningrequests': csrStrategy,
  'events.plat.io/events': eventStrategy,
  'coordination.plat.io/leases': leaseStrategy,
  'apiextensions.plat.io/customresourcedefinitions': crdStrategy,
  'flowcontrol.apiserver.plat.io/flowschemas': flowSchemaStrategy,
  'flowcontrol.apiserver.plat.io/prioritylevelconfigurations': priorityLevelStrategy,
  'rbac.authorization.plat.io/roles': roleStrategy,
  'rbac.authorization.plat.io/rolebindings': roleBindingStrategy,
  'rbac.authorization.plat.io/clusterroles': clusterRoleStrategy,
  'rbac.authorization.plat.io/clusterrolebindings': clusterRoleBindingStrategy,
};

export function strategyFor(group: string, resource: string): ResourceStrategy {
  return STRATEGIES[`${group}/${resource}`] ?? DEFAULT_STRATEGY;
}

/**
 * Typed shapes of the built-in kinds whose code reads them by field (controllers, strategies,
 * printers). Each lists only the fields used, all optional as in a decoded object: the shapes
 * describe what may be there, validation decides what must.
 */
import type { Condition, KubeObject, LabelSelector, ObjectMeta } from './object.js';

/** core/v1 Taint */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

/** core/v1 Container (the fields PodSpec validation and the QoS class read) */
export interface ContainerPort {
  name?: string;
  containerPort?: number;
  hostPort?: number;
  protocol?: string;
}
export interface ResourceRequirements {
  limits?: Record<string, unknown>;
  requests?: Record<string, unknown>;
}
export interface Container {
  name?: string;
  image?: string;
  ports?: ContainerPort[];
  resources?: ResourceRequirements;
  restartPolicy?: string;
}
/** A PodSpec as written, before validation: the lists and fields PodSpec validation checks. */
export interface PodSpecShape {
  containers?: unknown;
  initContainers?: unknown;
  restartPolicy?: unknown;
  nodeSelector?: unknown;
}

/** core/v1 PodTemplateSpec; the PodSpec is validated field by field, so it stays open here. */
export type PodSpecFields = Record<string, unknown> & { restartPolicy?: string };

/** core/v1 Pod (the fields binding and the connection subresources read) */
export type PodCondition = Omit<Condition, 'lastProbeTime'> & { lastProbeTime?: string | null };
export type PodSpec = PodSpecFields & {
  nodeName?: string;
  schedulingGates?: unknown[];
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number | null;
  containers?: unknown;
  initContainers?: unknown;
  ephemeralContainers?: unknown;
};
export type Pod = KubeObject<
  PodSpec,
  { phase?: string; qosClass?: string; podIP?: string; conditions?: PodCondition[] }
>;
/** core/v1 Binding */
export interface Binding extends KubeObject {
  target?: { kind?: string; name?: string };
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec?: PodSpecFields;
}

/** The replica-managing kinds (apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet) as validation reads them. */
export type WorkloadSpec = {
  replicas?: number;
  selector?: LabelSelector | null;
  template?: PodTemplateSpec;
};
export type Workload = KubeObject<WorkloadSpec>;
/** core/v1 ReplicationController: a map selector */
export type ReplicationController = KubeObject<{ selector?: Record<string, string>; template?: PodTemplateSpec }>;

/** batch/v1 Job and CronJob */
export type JobSpec = {
  selector?: LabelSelector | null;
  manualSelector?: boolean;
  template?: PodTemplateSpec;
  suspend?: boolean;
  completionMode?: string;
  parallelism?: number;
  completions?: number;
  backoffLimit?: number;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
};
export type Job = KubeObject<
  JobSpec,
  { startTime?: string; completionTime?: string; succeeded?: number; conditions?: Condition[] }
>;
export type CronJobSpec = {
  schedule?: string;
  concurrencyPolicy?: string;
  startingDeadlineSeconds?: number;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  jobTemplate?: { spec?: JobSpec };
};
export type CronJob = KubeObject<CronJobSpec>;

/** core/v1 Node (health and taints) */
export type Node = KubeObject<
  { unschedulable?: boolean; taints?: Taint[]; podCIDR?: string; providerID?: string },
  {
    conditions?: Condition[];
    addresses?: { type?: string; address?: string }[];
    nodeInfo?: Record<string, string>;
  }
>;

/** core/v1 Namespace */
export type Namespace = KubeObject<{ finalizers?: string[] }, { phase?: string; conditions?: Condition[] }>;

/** core/v1 Service */
export interface ServicePort {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}
export interface ServiceSpec {
  type?: string;
  selector?: Record<string, string>;
  ports?: ServicePort[];
  clusterIP?: string;
  clusterIPs?: string[];
  externalIPs?: string[];
  externalName?: string;
  sessionAffinity?: string;
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  internalTrafficPolicy?: string;
  externalTrafficPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
  healthCheckNodePort?: number;
  loadBalancerIP?: string;
}
export type Service = KubeObject<ServiceSpec>;
/** A Service after defaulting (spec set), as stored (metadata.name set). */
export type DefaultedService = Service & { spec: ServiceSpec; metadata: { name: string } };

/** core/v1 PersistentVolumeClaim (the spec fields the update rules compare) */
export interface PvcSpec {
  volumeName?: string;
  storageClassName?: string;
  volumeAttributesClassName?: string;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMode?: string;
  accessModes?: unknown;
  dataSource?: unknown;
}
export type PersistentVolumeClaim = KubeObject<PvcSpec, { phase?: string }>;

/** apiregistration/v1 APIService */
export interface APIServiceSpec {
  group?: string;
  version?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
  service?: { namespace?: string; name?: string; port?: number };
  insecureSkipTLSVerify?: boolean;
  caBundle?: string;
}
export type APIService = KubeObject<APIServiceSpec>;

/** networking/v1 Ingress */
export interface IngressBackend {
  service?: { name?: string; port?: { name?: string; number?: number } };
  resource?: { apiGroup?: string; kind?: string; name?: string };
}
export interface HTTPIngressPath {
  path?: string;
  pathType?: string;
  backend?: IngressBackend;
}
export interface IngressRule {
  host?: string;
  http?: { paths?: HTTPIngressPath[] };
}
export type Ingress = KubeObject<{ defaultBackend?: IngressBackend; rules?: IngressRule[]; ingressClassName?: string }>;

/** coordination/v1 Lease */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  preferredHolder?: string;
  strategy?: string;
}
export type Lease = KubeObject<LeaseSpec>;

/** certificates/v1 CertificateSigningRequest */
export interface CsrSpec {
  request?: string;
  signerName?: string;
  expirationSeconds?: number;
  usages?: string[];
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}
export interface CsrStatus {
  conditions?: Condition[];
  certificate?: string;
}
export type CertificateSigningRequest = KubeObject<CsrSpec, CsrStatus>;

/** policy/v1 PodDisruptionBudget */
export interface PdbSpec {
  selector?: LabelSelector;
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  unhealthyPodEvictionPolicy?: string;
}
export interface PdbStatus {
  observedGeneration?: number;
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  expectedPods?: number;
  disruptedPods?: Record<string, string>;
  conditions?: Condition[];
}
export type PodDisruptionBudget = KubeObject<PdbSpec, PdbStatus>;

/** core/v1 Secret and ServiceAccount */
export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  immutable?: boolean;
}
export interface ServiceAccount extends KubeObject {
  secrets?: { name?: string }[];
  imagePullSecrets?: { name?: string }[];
  automountServiceAccountToken?: boolean;
}

/** core/v1 ResourceQuota */
export type ResourceQuota = KubeObject<
  { hard?: Record<string, string>; scopes?: string[] },
  { hard?: Record<string, string>; used?: Record<string, string> }
>;

/** flowcontrol/v1 FlowSchema */
export interface Subject {
  kind?: string;
  user?: { name?: string };
  group?: { name?: string };
  serviceAccount?: { namespace?: string; name?: string };
}
export interface ResourcePolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}
export interface NonResourcePolicyRule {
  verbs?: string[];
  nonResourceURLs?: string[];
}
export interface PolicyRulesWithSubjects {
  subjects?: Subject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}
export interface FlowSchemaSpec {
  priorityLevelConfiguration?: { name?: string };
  matchingPrecedence?: number;
  distinguisherMethod?: { type?: string };
  rules?: PolicyRulesWithSubjects[];
}
export type FlowSchema = KubeObject<FlowSchemaSpec, { conditions?: Condition[] }>;

/** flowcontrol/v1 PriorityLevelConfiguration */
export interface LimitResponse {
  type?: string;
  queuing?: { queues?: number; handSize?: number; queueLengthLimit?: number };
}
export interface PriorityLevelSpec {
  type?: string;
  limited?: {
    nominalConcurrencyShares?: number;
    lendablePercent?: number;
    borrowingLimitPercent?: number;
    limitResponse?: LimitResponse;
  };
  exempt?: { nominalConcurrencyShares?: number; lendablePercent?: number };
}
export type PriorityLevelConfiguration = KubeObject<PriorityLevelSpec, { conditions?: Condition[] }>;

/** rbac Role and ClusterRole as written: the rules are checked one by one (strategies/rbac.ts). */
export interface Role extends KubeObject {
  rules?: unknown;
}
/** rbac RoleBinding and ClusterRoleBinding as written. */
export interface RoleBinding extends KubeObject {
  roleRef?: { apiGroup?: unknown; kind?: unknown; name?: unknown };
  subjects?: unknown;
}

/** ConfigMap and Secret: the data maps as written (validated key by key). */
export interface DataObject extends KubeObject {
  type?: string;
  immutable?: unknown;
  data?: unknown;
  binaryData?: unknown;
  stringData?: unknown;
}

/** apiextensions/v1 CustomResourceDefinitionNames */
export interface CrdNames {
  plural?: string;
  singular?: string;
  kind?: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}
/** apiextensions/v1 CustomResourceDefinition status, as the server and the CRD controller write it. */
export interface CrdStatus {
  acceptedNames?: CrdNames;
  storedVersions?: string[];
  conditions?: Condition[];
}
/**
 * apiextensions/v1 CustomResourceDefinition: the spec stays a decoded tree, validated field by
 * field (registry/crd/crd-validation.ts) before anything relies on its shape.
 */
export type CustomResourceDefinition = KubeObject<
  Record<string, unknown> & { group?: string; names?: CrdNames },
  CrdStatus
>;

/** autoscaling/v1 Scale, the view of the scale subresource: replicas as stored (the schema types them). */
export type Scale = KubeObject<{ replicas?: unknown }, { replicas?: unknown; selector?: string }>;

/**
 * The shapes the built-in Table printers (src/codec/printers/) read, for the kinds kinds.ts does
 * not describe or describes with fewer fields. As in kinds.ts every field is optional and only
 * the fields read are listed: a printer prints what is there (upstream prints zero values), and
 * its list readers (`asList`) tolerate a malformed value in place of an array.
 */
import type { IngressBackend, IngressRule, ServiceSpec } from './kinds.js';
import type { Condition, KubeObject, LabelSelector, ObjectMeta } from './object.js';

/** A pod template as the printers read it: the container list (names and images) and the labels. */
export interface TemplateView {
  metadata?: ObjectMeta;
  spec?: { containers?: unknown; nodeSelector?: Record<string, string> };
}

/** The replica counts of apps/v1 Deployment, ReplicaSet, StatefulSet and DaemonSet status, and core ReplicationController's. */
export interface ReplicaStatus {
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  desiredNumberScheduled?: number;
  currentNumberScheduled?: number;
  numberReady?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
}
/** apps/v1 Deployment, ReplicaSet, StatefulSet and DaemonSet as printed. */
export type AppsWorkload = KubeObject<
  { replicas?: number; selector?: LabelSelector | null; template?: TemplateView },
  ReplicaStatus
>;
/** core/v1 ReplicationController as printed (a map selector). */
export type PrintedReplicationController = KubeObject<
  { replicas?: number; selector?: Record<string, string>; template?: TemplateView },
  ReplicaStatus
>;
/** core/v1 PodTemplate */
export interface PodTemplate extends KubeObject {
  template?: TemplateView;
}
/** apps/v1 ControllerRevision */
export interface ControllerRevision extends KubeObject {
  revision?: number;
}

/** batch/v1 CronJob as printed. */
export type PrintedCronJob = KubeObject<
  {
    schedule?: string;
    timeZone?: string;
    suspend?: boolean;
    jobTemplate?: { spec?: { selector?: LabelSelector | null; template?: TemplateView } };
  },
  { active?: unknown[]; lastScheduleTime?: string }
>;

/** autoscaling/v2 MetricTarget and MetricValueStatus (quantities as stored). */
export interface MetricValue {
  type?: string;
  value?: unknown;
  averageValue?: unknown;
  averageUtilization?: number;
}
/** One metric source of an HPA spec (v2): the resource name and the target. */
export interface MetricSource {
  name?: string;
  target?: MetricValue;
}
/** The status of one metric: the current value. */
export interface MetricSourceStatus {
  name?: string;
  current?: MetricValue;
}
/** autoscaling/v2 MetricSpec and MetricStatus: the type names the member that is set. */
export interface Metric<T> {
  type?: string;
  resource?: T;
  containerResource?: T;
  pods?: T;
  object?: T;
  external?: T;
}
export type MetricSpec = Metric<MetricSource>;
export type MetricStatus = Metric<MetricSourceStatus>;
/** autoscaling/v1 or v2 HorizontalPodAutoscaler (v1's CPU fields beside v2's metrics). */
export type HorizontalPodAutoscaler = KubeObject<
  {
    scaleTargetRef?: { kind?: string; name?: string };
    minReplicas?: number;
    maxReplicas?: number;
    metrics?: MetricSpec[];
    targetCPUUtilizationPercentage?: number;
  },
  { currentReplicas?: number; currentMetrics?: MetricStatus[]; currentCPUUtilizationPercentage?: number }
>;

/** core/v1 ContainerStatus as printPod reads it (null: a malformed list item). */
export type ContainerStatus = {
  name?: string;
  restartCount?: number;
  started?: boolean;
  ready?: boolean;
  state?: {
    waiting?: { reason?: string };
    terminated?: { reason?: string; signal?: number; exitCode?: number };
    running?: unknown;
  };
  lastState?: { terminated?: { finishedAt?: string } };
} | null;
/** core/v1 Pod as printed (a list item may be null in a malformed object). */
export type PrintedPod = KubeObject<
  {
    containers?: unknown[];
    initContainers?: ({ name?: string; restartPolicy?: string } | null)[];
    nodeName?: string;
    readinessGates?: ({ conditionType?: string } | null)[];
  },
  {
    phase?: string;
    reason?: string;
    conditions?: (Partial<Condition> | null)[];
    initContainerStatuses?: ContainerStatus[];
    containerStatuses?: ContainerStatus[];
    podIP?: string;
    podIPs?: { ip?: string }[];
    nominatedNodeName?: string;
  }
>;

/** core/v1 ComponentStatus */
export interface ComponentStatus extends KubeObject {
  conditions?: unknown;
}

/** A core v1 or events.<domain>/v1 Event: both spellings of each field may be there. */
export interface ObjectRef {
  kind?: string;
  name?: string;
  fieldPath?: string;
}
export interface EventSource {
  component?: string;
  host?: string;
}
export interface EventObject extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  note?: string;
  firstTimestamp?: string;
  deprecatedFirstTimestamp?: string;
  lastTimestamp?: string;
  deprecatedLastTimestamp?: string;
  eventTime?: string;
  series?: { lastObservedTime?: string; count?: number };
  count?: number;
  deprecatedCount?: number;
  involvedObject?: ObjectRef;
  regarding?: ObjectRef;
  source?: EventSource;
  deprecatedSource?: EventSource;
  reportingComponent?: string;
  reportingController?: string;
  reportingInstance?: string;
}

/** core/v1 LoadBalancerStatus (Service and Ingress status). */
export interface LoadBalancerStatus {
  ingress?: ({ ip?: string; hostname?: string } | null)[];
}
/** core/v1 Service as printed. */
export type PrintedService = KubeObject<ServiceSpec, { loadBalancer?: LoadBalancerStatus }>;
/** core/v1 Endpoints */
export interface Endpoints extends KubeObject {
  subsets?: ({ addresses?: ({ ip?: string } | null)[]; ports?: ({ port?: number } | null)[] } | null)[];
}
/** discovery/v1 EndpointSlice */
export interface EndpointSlice extends KubeObject {
  addressType?: string;
  ports?: ({ port?: number; name?: string } | null)[];
  endpoints?: ({ addresses?: unknown[] } | null)[];
}
/** networking/v1 Ingress as printed. */
export type PrintedIngress = KubeObject<
  { defaultBackend?: IngressBackend; rules?: (IngressRule | null)[]; ingressClassName?: string; tls?: unknown[] },
  { loadBalancer?: LoadBalancerStatus }
>;
/** networking/v1 IngressClass */
export type IngressClass = KubeObject<{
  controller?: string;
  parameters?: { kind?: string; apiGroup?: string; name?: string };
}>;

/** core/v1 PersistentVolume */
export type PersistentVolume = KubeObject<
  {
    capacity?: { storage?: unknown };
    accessModes?: string[];
    persistentVolumeReclaimPolicy?: string;
    claimRef?: { namespace?: string; name?: string };
    storageClassName?: string;
    volumeAttributesClassName?: string;
    volumeMode?: string;
  },
  { phase?: string; reason?: string }
>;
/** core/v1 PersistentVolumeClaim as printed (the bound capacity and access modes are in status). */
export type PrintedClaim = KubeObject<
  { volumeName?: string; storageClassName?: string; volumeAttributesClassName?: string; volumeMode?: string },
  { phase?: string; capacity?: { storage?: unknown }; accessModes?: string[] }
>;
/** storage/v1 StorageClass, VolumeAttributesClass and CSIStorageCapacity: their fields are top-level. */
export interface StorageClass extends KubeObject {
  provisioner?: string;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
  allowVolumeExpansion?: boolean;
}
export interface VolumeAttributesClass extends KubeObject {
  driverName?: string;
}
export interface CSIStorageCapacity extends KubeObject {
  storageClassName?: string;
  capacity?: unknown;
}
/** storage/v1 CSIDriver and CSINode */
export type CSIDriver = KubeObject<{
  attachRequired?: boolean;
  podInfoOnMount?: boolean;
  storageCapacity?: boolean;
  tokenRequests?: ({ audience?: string } | null)[];
  requiresRepublish?: boolean;
  volumeLifecycleModes?: string[];
}>;
export type CSINode = KubeObject<{ drivers?: unknown[] }>;
/** storage/v1 VolumeAttachment */
export type VolumeAttachment = KubeObject<
  { attacher?: string; source?: { persistentVolumeName?: string }; nodeName?: string },
  { attached?: boolean }
>;
/** resource.<domain> ResourceSlice */
export type ResourceSlice = KubeObject<{ nodeName?: string; driver?: string; pool?: { name?: string } }>;
/** networking NetworkPolicy and ServiceCIDR */
export type NetworkPolicy = KubeObject<{ podSelector?: unknown }>;
export type ServiceCIDR = KubeObject<{ cidrs?: string[] }>;

/** admissionregistration webhook configurations: the webhook list is top-level. */
export interface WebhookConfiguration extends KubeObject {
  webhooks?: unknown[];
}
/** admissionregistration (Validating|Mutating)AdmissionPolicy and their bindings */
export type AdmissionPolicy = KubeObject<{
  validations?: unknown[];
  mutations?: unknown[];
  paramKind?: { apiVersion?: string; kind?: string };
}>;
export type AdmissionPolicyBinding = KubeObject<{
  policyName?: string;
  paramRef?: { name?: string; namespace?: string; selector?: LabelSelector };
}>;
/** internal.apiserver StorageVersion and storagemigration StorageVersionMigration */
export type StorageVersion = KubeObject<
  unknown,
  {
    commonEncodingVersion?: string;
    storageVersions?: ({ apiServerID?: string; encodingVersion?: string } | null)[];
  }
>;
export type StorageVersionMigration = KubeObject<{
  resource?: { resource?: string; version?: string; group?: string };
}>;

/** scheduling PriorityClass and node RuntimeClass: top-level fields. */
export interface PriorityClass extends KubeObject {
  value?: number;
  globalDefault?: boolean;
  preemptionPolicy?: string;
}
export interface RuntimeClass extends KubeObject {
  handler?: string;
}
/** certificates ClusterTrustBundle and coordination LeaseCandidate */
export type ClusterTrustBundle = KubeObject<{ signerName?: string }>;
export type LeaseCandidate = KubeObject<{ leaseName?: string; binaryVersion?: string; emulationVersion?: string }>;

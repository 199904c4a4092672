/**
 * Upstream's core/v1 defaulting of a PodSpec (SetDefaults_PodSpec, _Container, _Probe,
 * _HTTPGetAction, _Volume and the volume sources, _ObjectFieldSelector), shared by Pods and
 * every pod template. Go sets a non-pointer field when it holds its zero value, so those use
 * `||=` (a Protobuf body carries `""` and `0` for them); pointer fields use `??=`, which
 * keeps an explicit zero.
 */
import { fieldAt } from '../../api/object.js';

/** Decoded JSON being defaulted: any field may hold any value until checked. */
type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const objects = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** ParseImageName's tag: `latest` for an untagged image, none for a digest; `Always` only for `latest`. */
export function pullPolicyFor(image: unknown): string {
  const s = String(image ?? '');
  if (s.includes('@')) return 'IfNotPresent';
  const last = s.slice(s.lastIndexOf('/') + 1);
  const tag = last.includes(':') ? last.slice(last.indexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(p: unknown): void {
  if (!isObj(p)) return;
  p.timeoutSeconds ||= 1;
  p.periodSeconds ||= 10;
  p.successThreshold ||= 1;
  p.failureThreshold ||= 3;
  const httpGet = p.httpGet;
  if (isObj(httpGet)) {
    httpGet.path ||= '/';
    httpGet.scheme ||= 'HTTP';
  }
}

function defaultFieldRef(ref: unknown): void {
  if (isObj(ref)) ref.apiVersion ||= 'v1';
}

function defaultContainer(c: Json): void {
  c.terminationMessagePath ||= '/dev/termination-log';
  c.terminationMessagePolicy ||= 'File';
  c.imagePullPolicy ||= pullPolicyFor(c.image);
  c.resources ??= {};
  // the lists walked in place, not filtered copies (this runs for every container of every write)
  if (Array.isArray(c.ports)) for (const p of c.ports) if (isObj(p)) p.protocol ||= 'TCP';
  if (Array.isArray(c.env)) for (const e of c.env) if (isObj(e)) defaultFieldRef(fieldAt(e.valueFrom, 'fieldRef'));
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

const MODE_0644 = 420;
const SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

function defaultVolume(v: Json): void {
  if (!SOURCES.some((s) => v[s] !== undefined && v[s] !== null)) v.emptyDir = {};
  const hostPath = v.hostPath;
  if (isObj(hostPath)) hostPath.type ??= '';
  for (const s of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = v[s];
    if (isObj(src)) src.defaultMode ??= MODE_0644;
  }
  for (const item of objects(fieldAt(v.downwardAPI, 'items'))) defaultFieldRef(item.fieldRef);
  for (const src of objects(fieldAt(v.projected, 'sources'))) {
    for (const item of objects(fieldAt(src.downwardAPI, 'items'))) defaultFieldRef(item.fieldRef);
    const token = src.serviceAccountToken;
    if (isObj(token)) token.expirationSeconds ??= 3600;
  }
}

/** SetDefaults_PodSpec and what the generated defaulters apply inside it. */
export function defaultPodSpec(spec: Json): void {
  spec.restartPolicy ||= 'Always';
  spec.dnsPolicy ||= 'ClusterFirst';
  spec.schedulerName ||= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  for (const list of [spec.containers, spec.initContainers, spec.ephemeralContainers])
    if (Array.isArray(list)) for (const c of list) if (isObj(c)) defaultContainer(c);
  if (Array.isArray(spec.volumes)) for (const v of spec.volumes) if (isObj(v)) defaultVolume(v);
}

/**
 * SetDefaults_Pod on top of the spec's: requests default to limits, host-network pods get
 * their container ports as host ports, service links on. Containers are copied on write (the
 * spec itself is the caller's): on an update a patch shares the containers it left alone with
 * the stored object, and a change elsewhere (new limits, hostNetwork) must not write into them.
 */
export function defaultPodOnly(spec: Json): void {
  const hostNetwork = spec.hostNetwork === true;
  for (const list of ['containers', 'initContainers'] as const) {
    const items = spec[list];
    if (!Array.isArray(items)) continue;
    let out: unknown[] | undefined;
    for (let i = 0; i < items.length; i++) {
      const c: unknown = items[i];
      const next = isObj(c) ? podOnlyPorts(podOnlyRequests(c), hostNetwork) : c;
      if (next === c) continue;
      out ??= items.slice();
      out[i] = next;
    }
    if (out) spec[list] = out;
  }
  spec.enableServiceLinks ??= true;
}

/** The container with a request for each limit it lacks one for (a copy when one is added). */
function podOnlyRequests(c: Json): Json {
  const limits = fieldAt(c.resources, 'limits');
  if (!isObj(limits) || !Object.keys(limits).length) return c;
  const resources = c.resources as Json;
  const had = isObj(resources.requests) ? resources.requests : undefined;
  let requests: Json | undefined;
  for (const [k, v] of Object.entries(limits)) {
    // read as `requests[k] ??= v` reads (an inherited member counts as set)
    if ((requests ?? had)?.[k] !== undefined && (requests ?? had)?.[k] !== null) continue;
    requests ??= { ...had };
    requests[k] = v;
  }
  if (!requests && had) return c;
  return { ...c, resources: { ...resources, requests: requests ?? {} } };
}

/** A host-network pod's container ports get their container port as host port (copies when one does). */
function podOnlyPorts(c: Json, hostNetwork: boolean): Json {
  if (!hostNetwork || !Array.isArray(c.ports)) return c;
  let ports: unknown[] | undefined;
  c.ports.forEach((p: unknown, i: number) => {
    if (!isObj(p) || p.hostPort) return;
    ports ??= (c.ports as unknown[]).slice();
    ports[i] = { ...p, hostPort: p.containerPort };
  });
  return ports ? { ...c, ports } : c;
}

/** A pod template (PodTemplateSpec): its spec always exists upstream (a non-pointer field). */
export function defaultPodTemplate(template: unknown): void {
  if (!isObj(template)) return;
  if (template.spec === undefined || template.spec === null) template.spec = {};
  if (isObj(template.spec)) defaultPodSpec(template.spec);
}

/**
 * The ServiceAccount admission plugin (upstream plugin/pkg/admission/serviceaccount), mutating,
 * on pod creates: a pod without `serviceAccountName` gets `default`; the service account must
 * exist (403 otherwise; `default` is waited for up to ten times 100-200ms, as upstream, since
 * its controller creates it just after the namespace); unless the pod or the account opts out
 * (`automountServiceAccountToken: false`) or a container already mounts the token path, the
 * pod gets the projected token volume (`<short>-api-access-<5 chars>`: a bound token, the
 * cluster CA config map, the namespace) mounted read-only in every container and init
 * container. Mirror pods are left alone.
 */
import { randomInt } from 'node:crypto';
import { errors } from '../api/status.js';
import type { Identity } from '../api/identity.js';
import type { ServiceAccount } from '../api/kinds.js';
import { fieldAt, isObjectBody, isRecord } from '../api/object.js';
import type { AdmissionAttributes, AdmissionPlugin, RequestAttributes } from './attributes.js';

const LOOKUP_ATTEMPTS = 10;

/** A list field of the validated pod: [] when absent. */
const listed = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

export interface ServiceAccountDeps {
  /** the stored ServiceAccount's JSON, or undefined */
  serviceAccount(namespace: string, name: string): string | undefined;
  identity: Identity;
}

export class ServiceAccountPlugin implements AdmissionPlugin {
  readonly name = 'ServiceAccount';
  private readonly mirrorAnnotation: string;
  private readonly mountPath: string;
  private readonly volumePrefix: string;
  private readonly rootCA: string;

  constructor(private readonly deps: ServiceAccountDeps) {
    const short = deps.identity.systemNamespace.replace(/-system$/, '');
    this.mirrorAnnotation = `${deps.identity.product}.io/config.mirror`;
    this.mountPath = `/var/run/secrets/${deps.identity.product}.io/serviceaccount`;
    this.volumePrefix = `${short}-api-access-`;
    this.rootCA = `${short}-root-ca.crt`;
  }

  handles(a: RequestAttributes): boolean {
    return a.operation === 'CREATE' && a.group === '' && a.resource === 'pods' && !a.subresource;
  }

  async admit(a: AdmissionAttributes): Promise<boolean> {
    // the dry-run result of the create: a validated pod
    const pod = a.object;
    if (!isObjectBody(pod) || !isRecord(pod.spec)) return false;
    if (pod.metadata?.annotations && this.mirrorAnnotation in pod.metadata.annotations) return false;
    const spec = pod.spec;
    if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount || 'default';
    spec.serviceAccount = spec.serviceAccountName;
    const account = String(spec.serviceAccountName);
    const sa = await this.lookup(a.namespace, account);
    if (!sa) {
      const name = pod.metadata?.name || pod.metadata?.generateName || 'Unknown';
      throw errors.forbidden(
        `pods ${JSON.stringify(name)} is forbidden: error looking up service account ${a.namespace}/${account}: serviceaccount ${JSON.stringify(account)} not found`,
        { kind: 'pods', name },
      );
    }
    if (
      spec.automountServiceAccountToken === false ||
      (spec.automountServiceAccountToken === undefined && sa.automountServiceAccountToken === false)
    )
      return true;
    const containers = [...listed(spec.initContainers), ...listed(spec.containers)];
    if (
      containers.some((c) => listed(fieldAt(c, 'volumeMounts')).some((m) => fieldAt(m, 'mountPath') === this.mountPath))
    )
      return true;
    const volume = this.tokenVolume(listed(spec.volumes));
    spec.volumes = [...listed(spec.volumes), volume];
    for (const c of containers) {
      if (!isRecord(c)) continue;
      c.volumeMounts = [...listed(c.volumeMounts), { name: volume.name, readOnly: true, mountPath: this.mountPath }];
    }
    return true;
  }

  /** upstream getServiceAccount: the cache, retried for `default` (created by its controller). */
  private async lookup(namespace: string, name: string): Promise<ServiceAccount | undefined> {
    const attempts = name === 'default' ? LOOKUP_ATTEMPTS : 1;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100 + randomInt(100)));
      const json = this.deps.serviceAccount(namespace, name);
      if (json !== undefined) return JSON.parse(json);
    }
    return undefined;
  }

  private tokenVolume(existing: unknown[]) {
    const taken = new Set(existing.map((v) => fieldAt(v, 'name')));
    let name: string;
    do {
      name = this.volumePrefix + Array.from({ length: 5 }, () => ALPHANUMS[randomInt(ALPHANUMS.length)]).join('');
    } while (taken.has(name));
    return {
      name,
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: this.rootCA, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
        ],
      },
    };
  }
}

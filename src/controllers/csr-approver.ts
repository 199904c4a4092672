/**
 * The CSR approving controller (upstream kube-controller-manager's csrapproving): a pending
 * request (no Approved/Denied condition, no certificate) for the kubelet client signer whose
 * request is a valid node client certificate (signer-policy.ts) is approved when its requester
 * (spec.username, uid, groups, extra) may `create` `certificatesigningrequests/selfnodeclient`
 * (renewal: the requester is the node named in the CN) or `certificatesigningrequests/nodeclient`
 * (bootstrap) in the certificates group, asked of the authorizer chain as a
 * SubjectAccessReview would. The Approved condition (reason AutoApproved) goes through the
 * approval subresource with the observed resourceVersion; a conflict is dropped.
 */
import type { ChangeEvent, TypeRef } from '../actors/protocol.js';
import { groupFor, type Identity } from '../api/identity.js';
import type { Attributes } from '../auth/authz/attributes.js';
import type { CertificateSigningRequest } from '../api/kinds.js';
import type { Stored } from '../api/object.js';
import { CsrFeed } from './csr-feed.js';
import type { ActorPool } from '../actors/pool.js';
import { parseCSR, type CertificateRequest } from '../x509/request.js';
import { KeyedQueue } from './keyed-queue.js';
import { builtInSigners } from './signer-policy.js';

type Csr = Stored<CertificateSigningRequest>;

const JSON_ENC = { format: 'json' as const, pretty: false };

/** an authorizer may answer later (a webhook) */
export type Authorize = (a: Attributes) => boolean | Promise<boolean>;

interface Recognizer {
  subresource: 'selfnodeclient' | 'nodeclient';
  matches(csr: Csr, request: CertificateRequest): boolean;
  message: string;
}

export class CsrApprover {
  private readonly type: TypeRef;
  private readonly typeKey: string;
  private readonly recognizers: Recognizer[];
  private readonly kubelet: string;
  private readonly feed: CsrFeed;
  private readonly queue: KeyedQueue<Csr>;

  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    identity: Identity,
    private readonly authorize: Authorize,
    private readonly log = (m: string) => process.stderr.write(`${m}\n`),
  ) {
    const group = groupFor(identity, 'certificates.plat.io');
    this.type = { group, version: 'v1', resource: 'certificatesigningrequests' };
    this.typeKey = `${group}/certificatesigningrequests`;
    this.feed = new CsrFeed(pool, this.type, this.typeKey, (csr) => this.consider(csr));
    const kubelet = (this.kubelet = `${identity.product}.io/kube-apiserver-client-kubelet`);
    const check = builtInSigners(identity.product).get(kubelet)!;
    const nodeClient = (csr: Csr, req: CertificateRequest) =>
      csr.spec?.signerName === kubelet && check(req, csr.spec.usages ?? []) === undefined;
    this.recognizers = [
      {
        subresource: 'selfnodeclient',
        matches: (csr, req) => csr.spec?.username === req.subject.commonName && nodeClient(csr, req),
        message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
      },
      {
        subresource: 'nodeclient',
        matches: nodeClient,
        message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
      },
    ];
    this.queue = new KeyedQueue(
      (csr) => this.handle(csr),
      (name, e) => this.log(`csr-approver: ${name}: ${(e as Error).message}`),
    );
  }

  /** Acts on the stored requests, then on events. */
  start(): void {
    this.feed.start();
  }

  observe(events: readonly ChangeEvent[]): void {
    this.feed.observe(events);
  }

  private consider(csr: Csr): void {
    if (csr.spec?.signerName === this.kubelet && pending(csr)) this.queue.add(csr.metadata.name, csr);
  }

  private async handle(csr: Csr): Promise<void> {
    const name = csr.metadata.name;
    const request = parseCSR(Buffer.from(String(csr.spec?.request ?? ''), 'base64'));
    let r: Recognizer | undefined;
    for (const x of this.recognizers) {
      if (x.matches(csr, request) && (await this.allowed(csr, x.subresource))) {
        r = x;
        break;
      }
    }
    if (!r) return;
    const conditions = [
      ...(csr.status?.conditions ?? []),
      { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message },
    ];
    const res = await this.pool.submit({
      op: 'update',
      type: { ...this.type, subresource: 'approval' },
      enc: JSON_ENC,
      dryRun: false,
      namespace: '',
      name,
      fieldManager: 'kube-controller-manager',
      body: { text: JSON.stringify({ ...csr, status: { ...csr.status, conditions } }), contentType: 'json' },
    });
    if ('error' in res && res.error.code !== 409) this.log(`csr-approver: ${name}: ${res.error.message}`);
  }

  /** The SubjectAccessReview of the requester for `create` on certificatesigningrequests/<subresource>. */
  private allowed(csr: Csr, subresource: string): boolean | Promise<boolean> {
    const spec = csr.spec ?? {};
    const user = {
      username: String(spec.username ?? ''),
      uid: spec.uid,
      groups: Array.isArray(spec.groups) ? spec.groups : [],
      extra: spec.extra,
    };
    return this.authorize({
      user,
      verb: 'create',
      apiGroup: this.type.group,
      apiVersion: '*',
      resource: 'certificatesigningrequests',
      subresource,
      resourceRequest: true,
      path: '',
    });
  }
}

/** No certificate, neither Approved nor Denied yet. */
function pending(csr: Csr): boolean {
  if (csr.status?.certificate) return false;
  return !(csr.status?.conditions ?? []).some((c) => c?.type === 'Approved' || c?.type === 'Denied');
}

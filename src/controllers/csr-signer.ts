/**
 * The built-in CSR signer (upstream kube-controller-manager's csrsigning controller), fed by
 * the change events: a CertificateSigningRequest that is Approved (and not Denied), not Failed,
 * without a certificate and for one of the built-in signers (signer-policy.ts) is checked
 * against its signer's restrictions, then either gets `status.certificate` (issued from the
 * cluster CA, signed on the thread pool) or a Failed condition (reason SignerValidationFailure),
 * both written through the status subresource with the observed resourceVersion. A conflict is
 * dropped: the newer object arrives as an event and is considered again.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChangeEvent, TypeRef } from '../actors/protocol.js';
import { groupFor, type Identity } from '../api/identity.js';
import type { CertificateSigningRequest } from '../api/kinds.js';
import { conditionsOf, type Condition, type Stored } from '../api/object.js';
import { ensureClusterCAAsync } from '../auth/pki.js';
import { rfc3339 } from '../registry/objects.js';
import { CsrFeed } from './csr-feed.js';
import type { ActorPool } from '../actors/pool.js';
import { issueCertificate, type SigningCA } from '../x509/issue.js';
import { parseCSR } from '../x509/request.js';
import { KeyedQueue } from './keyed-queue.js';
import { builtInSigners, certificateTtlMs, type SignerCheck } from './signer-policy.js';

type Csr = Stored<CertificateSigningRequest>;

const JSON_ENC = { format: 'json' as const, pretty: false };
const FIELD_MANAGER = 'kube-controller-manager';

export interface SignerOptions {
  /** the CA pair; '' = the cluster CA under certDir (generated on first use) */
  clusterSigningCertFile: string;
  clusterSigningKeyFile: string;
  clusterSigningDurationMs: number;
  certDir: string;
  dataDir: string;
}

function readCA(files: { caFile: string; caKeyFile: string }): SigningCA {
  const cert = new X509Certificate(readFileSync(files.caFile));
  const key = createPrivateKey(readFileSync(files.caKeyFile));
  if (!cert.checkPrivateKey(key)) throw new Error(`${files.caKeyFile} is not the private key of ${files.caFile}`);
  return { cert, key };
}

/** The `--cluster-signing-*-file` pair, read at start (a bad file is a startup error naming the flags). */
export function loadGivenCA(o: SignerOptions): SigningCA {
  try {
    return readCA({ caFile: o.clusterSigningCertFile, caKeyFile: o.clusterSigningKeyFile });
  } catch (e) {
    throw new Error(`--cluster-signing-cert-file/--cluster-signing-key-file: ${(e as Error).message}`);
  }
}

/** The cluster CA under the cert dir, generated (asynchronously) when missing. */
export async function loadClusterCA(o: SignerOptions): Promise<SigningCA> {
  return readCA(await ensureClusterCAAsync(o.certDir || join(o.dataDir, 'pki')));
}

const conditions = (csr: CertificateSigningRequest): Condition[] => conditionsOf(csr);
const hasTrue = (csr: CertificateSigningRequest, type: string): boolean =>
  conditions(csr).some((c) => c?.type === type && c.status === 'True');

/** IsCertificateRequestApproved and not Failed, no certificate yet. */
export function awaitsSigning(csr: CertificateSigningRequest): boolean {
  const types = new Set(conditions(csr).map((c) => c?.type));
  return types.has('Approved') && !types.has('Denied') && !hasTrue(csr, 'Failed') && !csr.status?.certificate;
}

export class CsrSigner {
  private readonly type: TypeRef;
  private readonly typeKey: string;
  private readonly signers: Map<string, SignerCheck>;
  /** the signing CA, loaded once (concurrent first uses share the load) */
  private ca: Promise<SigningCA> | undefined;
  private readonly feed: CsrFeed;
  /** one signing per CSR name at a time, on its newest object */
  private readonly queue: KeyedQueue<Csr>;
  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    identity: Identity,
    private readonly options: SignerOptions,
    private readonly log = (m: string) => process.stderr.write(`${m}\n`),
  ) {
    const group = groupFor(identity, 'certificates.plat.io');
    this.type = { group, version: 'v1', resource: 'certificatesigningrequests' };
    this.typeKey = `${group}/certificatesigningrequests`;
    this.feed = new CsrFeed(pool, this.type, this.typeKey, (csr) => this.consider(csr));
    this.signers = builtInSigners(identity.product);
    this.queue = new KeyedQueue(
      (csr) => this.handle(csr),
      (name, e) => this.log(`csr-signer: ${name}: ${(e as Error).message}`),
    );
    // a given CA pair is read now, before anything starts: a bad file is a startup error
    if (options.clusterSigningCertFile) this.ca = Promise.resolve(loadGivenCA(options));
  }

  /** Acts on the stored requests, then on events. */
  start(): void {
    this.feed.start();
  }

  observe(events: readonly ChangeEvent[]): void {
    this.feed.observe(events);
  }

  private consider(csr: Csr): void {
    if (this.signers.has(csr.spec?.signerName ?? '') && awaitsSigning(csr)) this.queue.add(csr.metadata.name, csr);
  }

  private async handle(csr: Csr): Promise<void> {
    const check = this.signers.get(csr.spec!.signerName!)!;
    const usages: string[] = Array.isArray(csr.spec!.usages) ? csr.spec!.usages : [];
    const request = parseCSR(Buffer.from(String(csr.spec!.request ?? ''), 'base64'));
    const refused = check(request, usages);
    const status = { ...(csr.status ?? {}) };
    if (refused) {
      status.conditions = [
        ...conditions(csr),
        {
          type: 'Failed',
          status: 'True',
          reason: 'SignerValidationFailure',
          message: refused,
          lastUpdateTime: rfc3339(Date.now()),
        },
      ];
    } else {
      const ca = await (this.ca ??= loadClusterCA(this.options).catch((e) => {
        this.ca = undefined;
        throw e;
      }));
      const ttl = certificateTtlMs(csr.spec!.expirationSeconds, this.options.clusterSigningDurationMs);
      const pem = await issueCertificate(request, usages, ca, ttl);
      status.certificate = Buffer.from(pem).toString('base64');
    }
    const r = await this.pool.submit({
      op: 'update',
      type: { ...this.type, subresource: 'status' },
      enc: JSON_ENC,
      dryRun: false,
      namespace: '',
      name: csr.metadata.name,
      fieldManager: FIELD_MANAGER,
      body: { text: JSON.stringify({ ...csr, status }), contentType: 'json' },
    });
    if ('error' in r && r.error.code !== 409) this.log(`csr-signer: ${csr.metadata.name}: ${r.error.message}`);
  }
}

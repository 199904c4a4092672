/**
 * The CSR cleaner (upstream kube-controller-manager's csrcleaner): every hour it lists the
 * CertificateSigningRequests and deletes those whose time is up:
 * - issued (approved, a certificate set) 1 hour after the approval's lastUpdateTime, or once
 *   the certificate expired;
 * - denied or failed 1 hour after that condition's lastUpdateTime;
 * - without any condition 24 hours after creation.
 * Deletes carry the observed uid as a precondition (a recreated object stays).
 */
import { X509Certificate } from 'node:crypto';
import { bodyText } from '../actors/pack.js';
import type { TypeRef } from '../actors/protocol.js';
import { groupFor, type Identity } from '../api/identity.js';
import type { CertificateSigningRequest } from '../api/kinds.js';
import { conditionsOf } from '../api/object.js';
import type { ActorPool } from '../actors/pool.js';

const JSON_ENC = { format: 'json' as const, pretty: false };
const HOUR = 3_600_000;
export const CLEANER_INTERVAL_MS = HOUR;
const APPROVED_EXPIRATION = HOUR;
const DENIED_EXPIRATION = HOUR;
const PENDING_EXPIRATION = 24 * HOUR;

const conditionOf = (csr: CertificateSigningRequest, type: string) => conditionsOf(csr).find((c) => c?.type === type);
const olderThan = (ts: unknown, ms: number, now: number) => typeof ts === 'string' && Date.parse(ts) + ms < now;

function certificateExpired(b64: string, now: number): boolean {
  try {
    return Date.parse(new X509Certificate(Buffer.from(b64, 'base64')).validTo) < now;
  } catch {
    return false;
  }
}

/** Why upstream's cleaner would delete csr at now, or undefined. */
export function cleanupReason(csr: CertificateSigningRequest, now: number): string | undefined {
  const approved = conditionOf(csr, 'Approved'),
    denied = conditionOf(csr, 'Denied'),
    failed = conditionOf(csr, 'Failed');
  const cert = csr.status?.certificate;
  if (cert && approved && olderThan(approved.lastUpdateTime, APPROVED_EXPIRATION, now))
    return 'issued more than 1h ago';
  if (denied && olderThan(denied.lastUpdateTime, DENIED_EXPIRATION, now)) return 'denied more than 1h ago';
  if (failed && olderThan(failed.lastUpdateTime, DENIED_EXPIRATION, now)) return 'failed more than 1h ago';
  const conditions = conditionsOf(csr);
  if (conditions.length === 0 && olderThan(csr.metadata?.creationTimestamp, PENDING_EXPIRATION, now))
    return 'pending for more than 24h';
  if (cert && approved && certificateExpired(cert, now)) return 'its certificate expired';
  return undefined;
}

export class CsrCleaner {
  private readonly type: TypeRef;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    identity: Identity,
  ) {
    this.type = {
      group: groupFor(identity, 'certificates.plat.io'),
      version: 'v1',
      resource: 'certificatesigningrequests',
    };
  }

  /** Sweeps now and then every hour (the timer never keeps the process alive). */
  start(): void {
    void this.sweep(Date.now());
    this.timer = setInterval(() => void this.sweep(Date.now()), CLEANER_INTERVAL_MS).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One pass: resolves with the names deleted. */
  async sweep(now: number): Promise<string[]> {
    const r = await this.pool.submit({ op: 'list', type: this.type, enc: JSON_ENC, namespace: '', opts: {} });
    if (!('code' in r)) return [];
    const deleted: string[] = [];
    for (const csr of JSON.parse(bodyText(r.body)).items ?? []) {
      if (!cleanupReason(csr, now)) continue;
      const d = await this.pool.submit({
        op: 'delete',
        type: this.type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: '',
        name: csr.metadata.name,
        options: { preconditions: { uid: csr.metadata.uid } },
      });
      if ('code' in d) deleted.push(csr.metadata.name);
    }
    return deleted;
  }
}

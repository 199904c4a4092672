/**
 * CertificateSigningRequest status rules (upstream pkg/apis/certificates/validation and the
 * csrStatusStrategy / csrApprovalStrategy): conditions, status.certificate, and what each
 * write path may change. Lenient where the stored object already breaks a rule (upstream's
 * compatibility options).
 */
import { X509Certificate } from 'node:crypto';
import type { CertificateSigningRequest as Csr } from '../../api/kinds.js';
import type { Condition } from '../../api/object.js';
import { rfc3339 } from '../objects.js';
import { firstPemBlock } from '../../x509/request.js';
import { duplicate, forbidden, invalid, notSupported, required, same, type Cause } from './field-errors.js';

/** Condition types that may only be True; Approved and Denied exclude each other. */
const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);
const ALL_STATUSES = ['False', 'True', 'Unknown'];

export type CsrWritePath = 'main' | 'status' | 'approval';

/** A written condition: not yet validated, any element may be malformed. */
type RawCondition = Condition | undefined;

const conditionsOf = (csr: Csr | undefined): RawCondition[] =>
  Array.isArray(csr?.status?.conditions) ? csr.status.conditions : [];
const ofType = (csr: Csr | undefined, t: string): RawCondition[] => conditionsOf(csr).filter((c) => c?.type === t);
const certificateOf = (csr: Csr | undefined): string =>
  typeof csr?.status?.certificate === 'string' ? csr.status.certificate : '';

/** validateCertificate: status.certificate (base64 in JSON) holds only CERTIFICATE PEM blocks. */
export function certificateError(b64: string): string | undefined {
  if (!b64) return undefined;
  let text = Buffer.from(b64, 'base64').toString('latin1');
  let blocks = 0;
  for (let block = firstPemBlock(text); block; block = firstPemBlock(text)) {
    if (block.type !== 'CERTIFICATE')
      return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(block.type)}`;
    if (block.headers) return 'no PEM block headers are permitted';
    blocks++;
    try {
      new X509Certificate(block.der);
    } catch {
      return 'x509: malformed certificate';
    }
    text = block.rest;
  }
  return blocks === 0 ? 'must contain at least one CERTIFICATE PEM block' : undefined;
}

function hasDuplicateTypes(csr: Csr): boolean {
  const types = conditionsOf(csr).map((c) => c?.type);
  return new Set(types).size !== types.length;
}

/** validateConditions, with the compatibility allowances taken from the stored object. */
export function conditionCauses(csr: Csr, old: Csr | undefined): Cause[] {
  const out: Cause[] = [];
  const allowEmptyType = !!old && conditionsOf(old).some((c) => !c?.type);
  const allowBoth = !!old && ofType(old, 'Approved').length > 0 && ofType(old, 'Denied').length > 0;
  const allowDuplicates = !!old && hasDuplicateTypes(old);
  const seen = new Set<string>();
  let approved = false,
    denied = false;
  conditionsOf(csr).forEach((c, i) => {
    const at = `status.conditions[${i}]`;
    const type = String(c?.type ?? '');
    if (!allowEmptyType && !type) out.push(required(`${at}.type`));
    const allowed = TRUE_ONLY.has(type) ? ['True'] : ALL_STATUSES;
    if (!c?.status) out.push(required(`${at}.status`));
    else if (!allowed.includes(c.status)) out.push(notSupported(`${at}.status`, c.status, allowed));
    if (!allowBoth && (type === 'Approved' || type === 'Denied')) {
      if ((type === 'Approved' && denied) || (type === 'Denied' && approved))
        out.push(invalid(`${at}.type`, type, 'Approved and Denied conditions are mutually exclusive'));
      if (type === 'Approved') approved = true;
      else denied = true;
    }
    if (!allowDuplicates && seen.has(type)) out.push(duplicate(`${at}.type`, type));
    seen.add(type);
  });
  return out;
}

/** validateCertificateSigningRequestUpdate: what a write through `path` may not change. */
export function updateCauses(csr: Csr, old: Csr, path: CsrWritePath): Cause[] {
  const out = conditionCauses(csr, old);
  const cert = certificateOf(csr),
    oldCert = certificateOf(old);
  const certChanged = cert !== oldCert;
  if (certChanged && certificateError(oldCert) === undefined) {
    const err = certificateError(cert);
    if (err) out.push(invalid('status.certificate', '<certificate data>', err));
  }
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (ofType(csr, t).length < ofType(old, t).length)
      out.push(forbidden('status.conditions', `updates may not remove a condition of type ${JSON.stringify(t)}`));
  }
  if (path !== 'approval') {
    for (const t of ['Approved', 'Denied']) {
      const before = ofType(old, t),
        after = ofType(csr, t);
      if (after.length > before.length)
        out.push(forbidden('status.conditions', `updates may not add a condition of type ${JSON.stringify(t)}`));
      else if (after.length === before.length && !same(before, after))
        out.push(forbidden('status.conditions', `updates may not modify a condition of type ${JSON.stringify(t)}`));
    }
  }
  if (certChanged) {
    if (path !== 'status') out.push(forbidden('status.certificate', 'updates may not set certificate content'));
    else if (oldCert) out.push(forbidden('status.certificate', 'updates may not modify existing certificate content'));
  }
  return out;
}

/** preserveConditionInstances: when the count of type t is unchanged, the stored instances stay. */
function preserveConditions(csr: Csr, old: Csr, t: string): void {
  const before = conditionsOf(old).filter((c) => c?.type === t);
  const idx = conditionsOf(csr).flatMap((c, i) => (c?.type === t ? [i] : []));
  if (before.length !== idx.length || idx.length === 0) return;
  // a new list in a new status: both may be the stored object's (a patch shares what it left alone)
  const list = [...conditionsOf(csr)];
  idx.forEach((i, k) => {
    list[i] = structuredClone(before[k]) as Condition;
  });
  csr.status = { ...csr.status, conditions: list as Condition[] };
}

/**
 * populateConditionTimestamps: lastUpdateTime now when unset; lastTransitionTime kept from a
 * stored condition of the same type and status, else now. (v1 has no defaulting of a
 * condition's status, unlike v1beta1: a missing one is Required.)
 */
function stampConditions(csr: Csr, old: Csr, now: number): void {
  const ts = rfc3339(now);
  let stamped = false;
  // a condition is copied before it is stamped: it may be the stored object's
  const list = conditionsOf(csr).map((c) => {
    if (!c || typeof c !== 'object' || (c.lastUpdateTime && c.lastTransitionTime)) return c;
    stamped = true;
    const prev = conditionsOf(old).find((o) => o?.type === c.type && o?.status === c.status && o?.lastTransitionTime);
    return {
      ...c,
      lastUpdateTime: c.lastUpdateTime || ts,
      lastTransitionTime: c.lastTransitionTime || (prev?.lastTransitionTime ?? ts),
    };
  });
  if (stamped) csr.status = { ...csr.status, conditions: list as Condition[] };
}

/** csrStatusStrategy.PrepareForUpdate on next (the stored object with the written status). */
export function prepareStatusWrite(next: Csr, old: Csr, now: number): void {
  next.spec = old.spec;
  if (Array.isArray(next.status?.conditions)) {
    preserveConditions(next, old, 'Approved');
    preserveConditions(next, old, 'Denied');
  }
  stampConditions(next, old, now);
}

/** csrApprovalStrategy.PrepareForUpdate: only status.conditions come from the written object. */
export function approvalWrite<C extends Csr>(obj: Csr | undefined, old: C, now: number): C {
  const next = structuredClone(old);
  const conditions = obj?.status?.conditions;
  next.status = { ...(old.status ?? {}) };
  if (conditions === undefined || conditions === null) delete next.status.conditions;
  else next.status.conditions = structuredClone(conditions);
  stampConditions(next, old, now);
  return next;
}

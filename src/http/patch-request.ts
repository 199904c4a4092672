/**
 * The patch a PATCH request carries: its type from the Content-Type and its document. Shared
 * by the handler (src/handlers/resource.ts) and every check that previews the write first
 * (escalation and NodeRestriction, the CertificateSigning plugin, admission), so a check and
 * the write always read the same patch, whatever its media type.
 */
import { errors } from '../api/status.js';
import type { Body, PatchType } from '../actors/protocol.js';
import { APPLY_PATCH_CBOR, decodeCbor } from '../codec/cbor.js';
import type { Request } from './context.js';
import { toBody } from './negotiation.js';

/** patch media types and the patch each means */
const PATCH_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+json': 'apply',
};

/** the last Content-Type mediaTypeOf read and its media type (clients send one or two) */
let lastContentType = '';
let lastMediaType = '';

/**
 * The media type of a Content-Type, without parameters, lower case. Hot path: every apply reads it
 * three times on the front thread (admission's isApplyPatch, patchBody, patchOf), so the last
 * header's answer is kept and the split, trim and lower-casing run once per new header.
 */
function mediaTypeOf(contentType: string | undefined): string {
  const h = contentType ?? '';
  if (h !== lastContentType) {
    lastMediaType = h.split(';')[0]!.trim().toLowerCase();
    lastContentType = h;
  }
  return lastMediaType;
}

function patchTypeOf(contentType: string | undefined, cbor: boolean, custom = false): PatchType {
  const t = mediaTypeOf(contentType);
  let p: PatchType | undefined = PATCH_TYPES[t] ?? (cbor && t === APPLY_PATCH_CBOR ? 'apply' : undefined);
  if (custom && p === 'strategic') p = undefined;
  if (!p) {
    // upstream's list (crdHandler / the installer): no strategic merge for custom resources; the
    // apply-patch+json alias this server also takes is not advertised
    const types = Object.keys(PATCH_TYPES).filter(
      (k) => k !== 'application/apply-patch+json' && (!custom || PATCH_TYPES[k] !== 'strategic'),
    );
    const accepted = [...types, ...(cbor ? [APPLY_PATCH_CBOR] : [])];
    throw errors.unsupportedPatch(
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    );
  }
  return p;
}

/**
 * The patch a PATCH request carries, exactly as its actor will apply it: the patch type its
 * Content-Type names (415 for a type the server does not take) and the patch text (an apply
 * patch in CBOR decoded to JSON). The pre-write checks (escalation, NodeRestriction, signer,
 * admission) preview this same patch, so no content type can skip them.
 */
export function patchOf(
  r: Pick<Request, 'headers' | 'def'>,
  body: Body,
  cbor: boolean,
): { patchType: PatchType; text: string } {
  const patchType = patchTypeOf(r.headers.contentType, cbor, r.def.custom === true);
  return { patchType, text: patchText(body) };
}

/** The body of a PATCH as withBody hands it on: CBOR for an apply patch in CBOR, else text. */
export function patchBody(r: Pick<Request, 'headers'>, buf: Buffer): Body {
  return toBody(isCborApply(r) ? 'cbor' : 'json', buf);
}

/** Whether a request is a server-side apply (a PATCH in any of the apply content types, CBOR too). */
export function isApplyPatch(r: Pick<Request, 'headers' | 'info'>): boolean {
  if (r.info.verb !== 'patch') return false;
  const t = mediaTypeOf(r.headers.contentType);
  return PATCH_TYPES[t] === 'apply' || t === APPLY_PATCH_CBOR;
}

function isCborApply(r: Pick<Request, 'headers'>): boolean {
  return mediaTypeOf(r.headers.contentType) === APPLY_PATCH_CBOR;
}

/**
 * The patch document as text. An apply patch in CBOR is decoded here into its JSON form (apply
 * configurations are small, and apply then works on one representation); a malformed one is a 400.
 */
function patchText(body: Body): string {
  if (body.contentType !== 'cbor') return body.text;
  try {
    return JSON.stringify(decodeCbor(body.bytes ?? new Uint8Array()));
  } catch (e) {
    throw errors.badRequest(`error decoding cbor: ${(e as Error).message}`);
  }
}

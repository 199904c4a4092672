/**
 * Writes an actor's result back: a Status for an error, else its already-encoded bytes with
 * its warnings (Warning headers) and content encoding.
 */
import type { Result } from '../actors/protocol.js';
import { returnBody } from '../actors/pack.js';
import { send, sendStatus } from './exchange.js';
import type { Request } from './context.js';

export function reply(r: Request, res: Result): void {
  if ('error' in res) sendStatus(r.x, res.error, r.enc.pretty, r.enc);
  else if ('code' in res) {
    for (const w of res.warnings ?? []) r.x.headers.push(['Warning', `299 - ${headerQuoted(w)}`]);
    if (res.contentEncoding) r.x.headers.push(['Content-Encoding', res.contentEncoding], ['Vary', 'Accept-Encoding']);
    send(r.x, res.code, res.contentType, res.body);
    // written (uWS copied what the socket did not take): its buffer can be reused, unless audit keeps the body
    if (!r.x.audit) returnBody(res);
  }
}

/** A quoted-string header value: only printable ASCII, everything else escaped (\uXXXX). */
export function headerQuoted(s: string): string {
  return JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

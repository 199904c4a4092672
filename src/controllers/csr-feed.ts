/**
 * The CertificateSigningRequests a CSR controller acts on: once started, every stored request
 * (one list), then every created or changed one from the change events.
 */
import { bodyText } from '../actors/pack.js';
import type { ChangeEvent, TypeRef } from '../actors/protocol.js';
import type { ActorPool } from '../actors/pool.js';
import type { CertificateSigningRequest } from '../api/kinds.js';
import type { Stored } from '../api/object.js';

const JSON_ENC = { format: 'json' as const, pretty: false };

export class CsrFeed {
  private ready = false;

  constructor(
    private readonly pool: Pick<ActorPool, 'submit'>,
    private readonly type: TypeRef,
    private readonly typeKey: string,
    private readonly consider: (csr: Stored<CertificateSigningRequest>) => void,
  ) {}

  start(): void {
    this.ready = true;
    void this.pool.submit({ op: 'list', type: this.type, enc: JSON_ENC, namespace: '', opts: {} }).then((r) => {
      if ('code' in r) for (const csr of JSON.parse(bodyText(r.body)).items ?? []) this.consider(csr);
    });
  }

  observe(events: readonly ChangeEvent[]): void {
    if (!this.ready) return;
    for (const ev of events)
      if (ev.typeKey === this.typeKey && ev.type !== 'DELETED') this.consider(JSON.parse(ev.json));
  }
}

/**
 * An issuer's keys, fetched over HTTPS (the issuer's CA, else the system roots): discovery
 * (`<issuer>/.well-known/openid-configuration` or the configured discoveryURL, whose `issuer`
 * must equal the issuer URL) gives `jwks_uri`; the JWKS is fetched at start (retried in the
 * background until it works) and again when a token names a key id it does not know
 * (key rotation), at most once per `minRefreshMs`; concurrent refreshes share one fetch.
 */
import { request } from 'node:https';
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

const MAX_BODY = 1 << 20;

export function httpsGetJson(url: string, ca: string | undefined, timeoutMs = 10_000): Promise<unknown> {
  return new Promise((done, fail) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return fail(new Error(`invalid URL ${url}`));
    }
    if (u.protocol !== 'https:') return fail(new Error(`${url}: only https URLs are fetched`));
    const req = request(
      u,
      { method: 'GET', ca, headers: { accept: 'application/json' }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) {
            req.destroy(new Error(`${url}: response larger than ${MAX_BODY} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          if (res.statusCode !== 200) return fail(new Error(`${url}: ${res.statusCode} ${res.statusMessage}`));
          try {
            done(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            fail(new Error(`${url}: the response is not JSON`));
          }
        });
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: timeout`)));
    req.on('error', fail);
    req.end();
  });
}

export class RemoteKeys {
  private getKey: JWTVerifyGetKey | undefined;
  private jwksUri: string | undefined;
  private lastFetch = 0;
  private refreshing: Promise<void> | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** the last failure, for logs and the not-initialized error */
  lastError = '';
  /** resolves once the first key set is in */
  readonly ready: Promise<void>;
  private markReady!: () => void;

  constructor(
    private readonly issuer: string,
    private readonly discoveryURL: string | undefined,
    private readonly ca: string | undefined,
    private readonly opts: { minRefreshMs?: number; retryMs?: number; log?: (m: string) => void } = {},
  ) {
    this.ready = new Promise((d) => {
      this.markReady = d;
    });
    void this.initLoop();
  }

  get initialized(): boolean {
    return this.getKey !== undefined;
  }

  private async initLoop(): Promise<void> {
    while (!this.stopped && !this.getKey) {
      try {
        await this.fetchKeys();
        this.markReady();
        return;
      } catch (e) {
        this.lastError = (e as Error).message;
        this.opts.log?.(`jwt authenticator for ${this.issuer}: ${this.lastError} (retrying)`);
        await new Promise<void>((d) => {
          this.timer = setTimeout(d, this.opts.retryMs ?? 10_000);
          this.timer.unref?.();
        });
      }
    }
  }

  private async fetchKeys(): Promise<void> {
    if (!this.jwksUri) {
      const url = this.discoveryURL || `${this.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      const doc = (await httpsGetJson(url, this.ca)) as { issuer?: unknown; jwks_uri?: unknown } | null | undefined;
      if (doc?.issuer !== this.issuer)
        throw new Error(
          `oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(this.issuer)} got ${JSON.stringify(doc?.issuer)}`,
        );
      if (typeof doc.jwks_uri !== 'string') throw new Error(`${url}: no jwks_uri`);
      this.jwksUri = doc.jwks_uri;
    }
    this.lastFetch = Date.now();
    const jwks = (await httpsGetJson(this.jwksUri!, this.ca)) as JSONWebKeySet;
    if (!Array.isArray(jwks?.keys)) throw new Error(`${this.jwksUri}: not a JWK set`);
    this.getKey = createLocalJWKSet(jwks);
  }

  /** A key lookup for jose that refreshes the set once when no key matches. */
  readonly keyFor: JWTVerifyGetKey = async (header, token) => {
    if (!this.getKey)
      throw new Error(
        `oidc: authenticator for issuer ${JSON.stringify(this.issuer)} is not initialized${this.lastError ? `: ${this.lastError}` : ''}`,
      );
    try {
      return await this.getKey(header, token);
    } catch (e) {
      if (
        (e as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' ||
        Date.now() - this.lastFetch < (this.opts.minRefreshMs ?? 1000)
      )
        throw e;
      this.refreshing ??= this.fetchKeys().finally(() => {
        this.refreshing = undefined;
      });
      await this.refreshing;
      return this.getKey(header, token);
    }
  };

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

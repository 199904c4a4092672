/**
 * A loopback HTTPS OpenID provider for tests: discovery documents and JWKS served with a
 * certificate made by openssl, keys made with jose and rotatable, and a token signer.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type CryptoKey } from 'jose';
import type { Pki } from '../helpers.js';

interface Key {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export class TestIssuer {
  private server!: Server;
  private keys: Key[] = [];
  base = '';
  /** requests served, by path */
  readonly hits = new Map<string, number>();
  /** extra discovery documents: path → issuer they announce */
  readonly discovery = new Map<string, string>();

  /** pki must hold `<ca>.crt` and a serving pair `<name>.crt/.key` for 127.0.0.1 */
  async start(pki: Pki, name: string): Promise<this> {
    this.server = createServer({ key: pki.read(`${name}.key`), cert: pki.read(`${name}.crt`) }, (req, res) => {
      const path = new URL(req.url ?? '/', this.base).pathname;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const json = (o: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(o));
      };
      if (path === '/jwks') return json({ keys: this.keys.map((k) => k.jwk) });
      const announced = path === '/.well-known/openid-configuration' ? this.base : this.discovery.get(path);
      if (announced !== undefined)
        return json({
          issuer: announced,
          jwks_uri: `${this.base}/jwks`,
          id_token_signing_alg_values_supported: ['RS256'],
        });
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((d) => this.server.listen(0, '127.0.0.1', d));
    this.base = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    await this.addKey('key-1');
    return this;
  }

  async addKey(kid: string, alg = 'RS256'): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    this.keys.push({ kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } });
  }

  /** Replaces every key by a new one (rotation). */
  async rotate(kid: string): Promise<void> {
    this.keys = [];
    await this.addKey(kid);
  }

  /** Signs claims with the newest key (or kid); iss, aud, iat and exp defaulted. */
  async token(
    claims: Record<string, unknown>,
    o: { kid?: string; alg?: string; iss?: string; aud?: string | string[]; expIn?: number } = {},
  ): Promise<string> {
    const key = o.kid ? this.keys.find((k) => k.kid === o.kid)! : this.keys.at(-1)!;
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: o.alg ?? key.alg, kid: key.kid })
      .setIssuer(o.iss ?? this.base)
      .setAudience(o.aud ?? 'plat')
      .setIssuedAt(now)
      .setExpirationTime(now + (o.expIn ?? 600))
      .sign(key.privateKey);
  }

  close(): void {
    this.server?.close();
    this.server?.closeAllConnections();
  }
}

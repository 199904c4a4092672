/**
 * Encryption at rest in the shard actors: values of the configured resources are written with
 * the first provider (and its first key) and read with whichever provider's prefix they carry,
 * as upstream's prefix transformers. Stored layout `plat:enc:<provider>:v1:<key name>:<bytes>`
 * (upstream `k8s:enc:...`); the bytes travel in the backend's string values as latin1 (one
 * character per byte), so the backends keep their string contract.
 *
 * aescbc: 16-byte IV, AES-CBC with PKCS#7 padding. aesgcm: 12-byte nonce, AES-GCM with the
 * storage key as additional authenticated data (a value moved to another key fails to
 * decrypt), 16-byte tag last. secretbox: 24-byte nonce, NaCl secretbox.
 */
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCM, type DecipherGCM } from 'node:crypto';
import type { EncryptionConfig, ProviderConfig } from './config.js';
import { secretboxOpen, secretboxSeal } from './secretbox.js';

const PREFIX = 'plat:enc:';

export interface Transformer {
  /** the value to store for plain (the object's JSON) under key */
  write(key: string, plain: string): string;
  /** the object's JSON from a stored value; throws a message naming the cause when it cannot */
  read(key: string, stored: string): string;
}

const IDENTITY: Transformer = { write: (_k, v) => v, read: (_k, v) => v };

interface KeyedCipher {
  prefix: string;
  seal(key: string, plain: Buffer): Buffer;
  open(key: string, data: Buffer): Buffer;
}

function cipherFor(type: 'aescbc' | 'aesgcm' | 'secretbox', name: string, secret: Buffer): KeyedCipher {
  const prefix = `${PREFIX}${type}:v1:${name}:`;
  const bits = secret.length * 8;
  if (type === 'aescbc') {
    return {
      prefix,
      seal: (_k, plain) => {
        const iv = randomBytes(16);
        const c = createCipheriv(`aes-${bits}-cbc`, secret, iv);
        return Buffer.concat([iv, c.update(plain), c.final()]);
      },
      open: (_k, data) => {
        if (data.length < 16 || (data.length - 16) % 16 !== 0 || data.length === 16)
          throw new Error('the stored data was shorter than the required size or not a whole number of blocks');
        const d = createDecipheriv(`aes-${bits}-cbc`, secret, data.subarray(0, 16));
        try {
          return Buffer.concat([d.update(data.subarray(16)), d.final()]);
        } catch {
          throw new Error('invalid PKCS7 data (empty or not padded)');
        }
      },
    };
  }
  if (type === 'aesgcm') {
    return {
      prefix,
      seal: (key, plain) => {
        const nonce = randomBytes(12);
        const c = createCipheriv(`aes-${bits}-gcm`, secret, nonce) as CipherGCM;
        c.setAAD(Buffer.from(key));
        return Buffer.concat([nonce, c.update(plain), c.final(), c.getAuthTag()]);
      },
      open: (key, data) => {
        if (data.length < 12 + 16) throw new Error('the stored data was shorter than the required size');
        const d = createDecipheriv(`aes-${bits}-gcm`, secret, data.subarray(0, 12)) as DecipherGCM;
        d.setAAD(Buffer.from(key));
        d.setAuthTag(data.subarray(data.length - 16));
        try {
          return Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]);
        } catch {
          throw new Error('cipher: message authentication failed');
        }
      },
    };
  }
  return {
    prefix,
    seal: (_k, plain) => {
      const nonce = randomBytes(24);
      return Buffer.concat([nonce, secretboxSeal(plain, nonce, secret)]);
    },
    open: (_k, data) => {
      if (data.length < 24 + 16) throw new Error('the stored data was shorter than the required size');
      const out = secretboxOpen(data.subarray(24), data.subarray(0, 24), secret);
      if (!out) throw new Error('output array was not large enough for encryption');
      return Buffer.from(out);
    },
  };
}

class PrefixTransformer implements Transformer {
  private readonly ciphers: KeyedCipher[] = [];
  private readonly writer: KeyedCipher | undefined;
  private readonly identityReads: boolean;

  constructor(providers: ProviderConfig[]) {
    for (const p of providers) {
      if (p.type === 'identity') continue;
      for (const k of p.keys) this.ciphers.push(cipherFor(p.type, k.name, Buffer.from(k.secret, 'base64')));
    }
    this.writer = providers[0]!.type === 'identity' ? undefined : this.ciphers[0];
    this.identityReads = providers.some((p) => p.type === 'identity');
  }

  write(key: string, plain: string): string {
    if (!this.writer) return plain;
    return this.writer.prefix + this.writer.seal(key, Buffer.from(plain, 'utf8')).toString('latin1');
  }

  read(key: string, stored: string): string {
    for (const c of this.ciphers) {
      if (!stored.startsWith(c.prefix)) continue;
      return c.open(key, Buffer.from(stored.slice(c.prefix.length), 'latin1')).toString('utf8');
    }
    if (this.identityReads) return stored;
    throw new Error('no matching prefix found');
  }
}

/** The transformer of each stored type (`<group>/<resource>`), resolved once per type. */
export class Transformers {
  private readonly byType = new Map<string, Transformer>();

  constructor(private readonly config: EncryptionConfig | undefined) {}

  forType(typeKey: string): Transformer {
    let t = this.byType.get(typeKey);
    if (!t) this.byType.set(typeKey, (t = this.resolve(typeKey)));
    return t;
  }

  /** Storage keys are `<group>/<resource>/<namespace>/<name>`. */
  forKey(key: string): Transformer {
    return this.forType(key.slice(0, key.indexOf('/', key.indexOf('/') + 1)));
  }

  private resolve(typeKey: string): Transformer {
    if (!this.config) return IDENTITY;
    const [group, resource] = typeKey.split('/') as [string, string];
    const name = group ? `${resource}.${group}` : resource;
    const wildcard = `*.${group}`;
    const entry = this.config.resources.find((r) =>
      r.resources.some((n) => n === name || n === wildcard || n === '*.*'),
    );
    return entry ? new PrefixTransformer(entry.providers) : IDENTITY;
  }
}

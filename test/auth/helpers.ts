/**
 * Test helpers for authentication: a server child process with its secure port, HTTPS requests
 * with node:https (ca, client certificate), and certificates made with the openssl CLI.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { request as httpsRequest, type Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';

const MAIN = resolve(process.cwd(), 'dist/src/main.js');

export interface AuthServer {
  url: string;
  secureUrl: string;
  securePort: number;
  dataDir: string;
  proc: ChildProcess;
  stop(): Promise<void>;
  cleanup(): void;
}

/** Starts the server with `--secure-port 0` and waits for both listening lines. */
export async function startAuthServer(args: string[], dataDir?: string): Promise<AuthServer> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'plat-auth-'));
  const proc = spawn(process.execPath, [MAIN, '--port', '0', '--secure-port', '0', '--data-dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '',
    err = '';
  proc.stderr!.on('data', (d) => {
    err += d;
  });
  const [port, securePort] = await new Promise<[number, number]>((done, fail) => {
    proc.stdout!.on('data', (d) => {
      out += d;
      const p = /listening on http:\/\/[^:]+:(\d+)/.exec(out),
        sp = /listening on https:\/\/\S*:(\d+)\s/.exec(out);
      if (p && sp) done([Number(p[1]), Number(sp[1])]);
    });
    proc.once('exit', (code) => fail(new Error(`server exited with ${code}: ${err}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    secureUrl: `https://127.0.0.1:${securePort}`,
    securePort,
    dataDir: dir,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await exited;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs the server expecting a startup failure; returns its exit code and stderr. */
export async function startupError(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'plat-auth-'));
  // any free secure port rather than the default 6443 should the flags turn out valid
  const proc = spawn(process.execPath, [MAIN, '--port', '0', '--secure-port', '0', '--data-dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d) => {
    err += d;
  });
  const [code] = (await once(proc, 'exit')) as [number | null];
  rmSync(dir, { recursive: true, force: true });
  return { code, stderr: err };
}

export interface TlsClient {
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
  agent?: Agent;
}
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export function request(
  base: string,
  tls: TlsClient,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const url = new URL(path, base);
  const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const h: Record<string, string> = { ...headers };
  if (data !== undefined && !h['content-type']) h['content-type'] = 'application/json';
  return new Promise((done, fail) => {
    const req = httpsRequest(
      url,
      {
        method,
        headers: h,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        agent: tls.agent ?? false,
        servername: 'localhost',
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => {
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          done({ status: res.statusCode!, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', fail);
    req.end(data);
  });
}

export function openssl(cwd: string, ...args: string[]): void {
  execFileSync('/usr/bin/openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A temp directory of certificates: CAs and client certificates they sign. */
export class Pki {
  readonly dir = mkdtempSync(join(tmpdir(), 'plat-pki-'));

  path(name: string): string {
    return join(this.dir, name);
  }
  read(name: string): Buffer {
    return readFileSync(this.path(name));
  }

  /** A self-signed CA: <name>.crt and <name>.key. */
  ca(name: string): this {
    openssl(
      this.dir,
      'req',
      '-x509',
      ...EC,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,digitalSignature',
    );
    return this;
  }

  /** A client certificate signed by ca; expired ones get validity dates in 2020. */
  client(ca: string, name: string, subject: string, expired = false): this {
    openssl(this.dir, 'req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    writeFileSync(this.path(`${name}.ext`), 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n');
    if (!expired) {
      openssl(
        this.dir,
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        `${ca}.crt`,
        '-CAkey',
        `${ca}.key`,
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
      );
      return this;
    }
    writeFileSync(this.path('index.txt'), '');
    writeFileSync(this.path('serial'), '1000\n');
    writeFileSync(
      this.path('ca.cnf'),
      [
        '[ca]',
        'default_ca = d',
        '[d]',
        'database = index.txt',
        'new_certs_dir = .',
        'serial = serial',
        'default_md = sha256',
        'policy = p',
        'unique_subject = no',
        '[p]',
        'commonName = supplied',
        'organizationName = optional',
        '',
      ].join('\n'),
    );
    openssl(
      this.dir,
      'ca',
      '-batch',
      '-config',
      'ca.cnf',
      '-cert',
      `${ca}.crt`,
      '-keyfile',
      `${ca}.key`,
      '-in',
      `${name}.csr`,
      '-out',
      `${name}.crt`,
      '-startdate',
      '20200101000000Z',
      '-enddate',
      '20200102000000Z',
      '-notext',
      '-extfile',
      `${name}.ext`,
    );
    return this;
  }

  /** A serving certificate for localhost and 127.0.0.1 signed by ca. */
  server(ca: string, name: string): this {
    openssl(this.dir, 'req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(this.path(`${name}.ext`), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    openssl(
      this.dir,
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    );
    return this;
  }

  /** An RSA or ECDSA private key PEM (for service account signing). */
  key(name: string, type: 'rsa' | 'ec'): string {
    if (type === 'rsa')
      openssl(this.dir, 'genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', `${name}.key`);
    else openssl(this.dir, 'genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
    return this.path(`${name}.key`);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A secure-port server whose users come from a static token file, with the CA to trust it. */
export interface TokenServer extends AuthServer {
  pki: Pki;
  tls: TlsClient;
  /** Stops the server and removes its data directory and the token file. */
  close(): Promise<void>;
}

/** Starts a server with `--token-auth-file` holding `tokens` (CSV lines `token,user,uid[,"g1,g2"]`). */
export async function startTokenServer(tokens: string, args: string[] = []): Promise<TokenServer> {
  const pki = new Pki();
  writeFileSync(pki.path('tokens.csv'), tokens);
  const s = await startAuthServer(['--token-auth-file', pki.path('tokens.csv'), ...args]).catch((e: unknown) => {
    pki.cleanup();
    throw e;
  });
  const close = async () => {
    await s.stop();
    s.cleanup();
    pki.cleanup();
  };
  return Object.assign(s, { pki, tls: { ca: readFileSync(join(s.dataDir, 'pki', 'ca.crt')) }, close });
}

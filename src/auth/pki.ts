/**
 * Serving certificates: the files given by `--tls-cert-file`/`--tls-private-key-file`, or a
 * cluster CA and a serving certificate it signs, generated once under `--cert-dir` with the
 * openssl CLI and reused on later starts. The same cluster CA signs approved CSRs
 * (src/controllers/csr-signer.ts) unless `--cluster-signing-*-file` name another.
 */
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { flagError, reasonOf } from '../api/startup-error.js';
import { mkdir, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';

export const OPENSSL = '/usr/bin/openssl';

export interface ServingFiles {
  certFile: string;
  keyFile: string;
  /** the generated cluster CA (undefined when the serving pair was given) */
  caFile?: string;
  caKeyFile?: string;
}

function openssl(args: string[]): void {
  try {
    execFileSync(OPENSSL, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? '').trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr || (e as Error).message}`);
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Subject alternative names of the serving certificate. */
export function servingNames(bindAddress: string): string[] {
  const names = ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1'];
  if (isIP(bindAddress) && bindAddress !== '0.0.0.0' && bindAddress !== '::' && !names.includes(`IP:${bindAddress}`))
    names.push(`IP:${bindAddress}`);
  return names;
}

/**
 * Returns the serving pair: the given files, else the generated ones under certDir (created on
 * first use; an existing pair is reused as is).
 */
export function ensureServingCertificate(o: {
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  certDir: string;
  bindAddress: string;
}): ServingFiles {
  if (o.tlsCertFile || o.tlsPrivateKeyFile) {
    if (!o.tlsCertFile || !o.tlsPrivateKeyFile)
      throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
    for (const [flag, f] of [
      ['tls-cert-file', o.tlsCertFile],
      ['tls-private-key-file', o.tlsPrivateKeyFile],
    ] as const) {
      try {
        accessSync(f, constants.R_OK);
      } catch (e) {
        throw flagError(flag, f, `cannot read: ${reasonOf(e)}`, `give a readable PEM file with --${flag}`);
      }
    }
    return { certFile: o.tlsCertFile, keyFile: o.tlsPrivateKeyFile };
  }
  const dir = o.certDir;
  const ca = ensureClusterCA(dir);
  const files = { ...ca, certFile: join(dir, 'apiserver.crt'), keyFile: join(dir, 'apiserver.key') };
  if (!existsSync(files.certFile) || !existsSync(files.keyFile)) {
    signCertificate(files.caFile, files.caKeyFile, files.certFile, files.keyFile, '/CN=platform-apiserver', 365, [
      `subjectAltName=${servingNames(o.bindAddress).join(',')}`,
      'extendedKeyUsage=serverAuth',
      'keyUsage=critical,digitalSignature,keyEncipherment',
    ]);
  }
  return files;
}

const caFiles = (certDir: string) => ({ caFile: join(certDir, 'ca.crt'), caKeyFile: join(certDir, 'ca.key') });
const caArgs = (f: { caFile: string; caKeyFile: string }) => [
  'req',
  '-x509',
  ...EC_KEY,
  '-keyout',
  f.caKeyFile,
  '-out',
  f.caFile,
  '-days',
  '3650',
  '-subj',
  '/CN=platform-ca',
  '-addext',
  'basicConstraints=critical,CA:TRUE',
  '-addext',
  'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
];

/**
 * The cluster CA under certDir (`ca.crt`, `ca.key`), generated on first use (10 years, EC
 * P-256); a certificate the previous CA issued for serving is removed with it.
 */
export function ensureClusterCA(certDir: string): { caFile: string; caKeyFile: string } {
  const files = caFiles(certDir);
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  if (!existsSync(files.caFile) || !existsSync(files.caKeyFile)) {
    openssl(caArgs(files));
    rmSync(join(certDir, 'apiserver.crt'), { force: true });
  }
  return files;
}

/** ensureClusterCA with openssl run asynchronously: for a running server, off the event loop. */
export async function ensureClusterCAAsync(certDir: string): Promise<{ caFile: string; caKeyFile: string }> {
  const files = caFiles(certDir);
  await mkdir(certDir, { recursive: true, mode: 0o700 });
  if (!existsSync(files.caFile) || !existsSync(files.caKeyFile)) {
    await new Promise<void>((resolve, reject) =>
      execFile(OPENSSL, caArgs(files), (err, _out, stderr) =>
        err ? reject(new Error(`openssl req failed: ${String(stderr).trim() || err.message}`)) : resolve(),
      ),
    );
    await rm(join(certDir, 'apiserver.crt'), { force: true });
  }
  return files;
}

/** Issues a certificate signed by the CA for a fresh key (used for serving and client certificates). */
export function signCertificate(
  caFile: string,
  caKeyFile: string,
  certFile: string,
  keyFile: string,
  subject: string,
  days: number,
  extensions: string[],
): void {
  const csr = `${certFile}.csr`;
  const ext = `${certFile}.ext`;
  openssl(['req', '-new', ...EC_KEY, '-keyout', keyFile, '-out', csr, '-subj', subject]);
  writeFileSync(ext, extensions.join('\n') + '\n');
  try {
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      caFile,
      '-CAkey',
      caKeyFile,
      '-CAcreateserial',
      '-out',
      certFile,
      '-days',
      String(days),
      '-extfile',
      ext,
    ]);
  } finally {
    rmSync(csr, { force: true });
    rmSync(ext, { force: true });
  }
}

/**
 * The admin client certificate (`admin.crt`/`admin.key`, CN `<product>-admin`, O
 * `system:masters`) signed by the generated cluster CA, created once and reused.
 */
export function ensureAdminCertificate(
  serving: ServingFiles,
  certDir: string,
  product: string,
): { certFile: string; keyFile: string } | undefined {
  if (!serving.caFile || !serving.caKeyFile) return undefined;
  const files = { certFile: join(certDir, 'admin.crt'), keyFile: join(certDir, 'admin.key') };
  if (!existsSync(files.certFile) || !existsSync(files.keyFile)) {
    signCertificate(
      serving.caFile,
      serving.caKeyFile,
      files.certFile,
      files.keyFile,
      `/O=system:masters/CN=${product}-admin`,
      365,
      ['extendedKeyUsage=clientAuth', 'keyUsage=critical,digitalSignature'],
    );
  }
  return files;
}

/**
 * The client certificate the server presents to node agents when `--kubelet-client-certificate`
 * is not given (`kubelet-client.crt`/`.key`, CN `<short>-apiserver-kubelet-client`, no
 * organization: as upstream's kubeadm default, it is authorized by RBAC on the agents, not by
 * system:masters), signed by the generated cluster CA, created once and reused.
 */
export function ensureKubeletClientCertificate(
  serving: ServingFiles,
  certDir: string,
  user: string,
): { certFile: string; keyFile: string } | undefined {
  if (!serving.caFile || !serving.caKeyFile) return undefined;
  const files = { certFile: join(certDir, 'kubelet-client.crt'), keyFile: join(certDir, 'kubelet-client.key') };
  if (!existsSync(files.certFile) || !existsSync(files.keyFile)) {
    signCertificate(serving.caFile, serving.caKeyFile, files.certFile, files.keyFile, `/CN=${user}`, 365, [
      'extendedKeyUsage=clientAuth',
      'keyUsage=critical,digitalSignature',
    ]);
  }
  return files;
}

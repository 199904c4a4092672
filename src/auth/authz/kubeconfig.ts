/**
 * The client configuration (kubeconfig) of a webhook: the current context's cluster (server,
 * certificate authority) and user (client certificate and key, or a bearer token). Files it
 * names are relative to the kubeconfig's directory, as upstream's loader resolves them.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { fieldAt } from '../../api/object.js';

/** What an HTTPS call to the webhook needs. */
export interface WebhookClientConfig {
  /** the full URL requests are POSTed to */
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecureSkipTlsVerify: boolean;
}

/** The `field` of the entry of `list` called `name` (undefined when there is none); unchecked. */
const named = (list: unknown, name: string, field: string): unknown => {
  if (!Array.isArray(list)) return undefined;
  return fieldAt(
    list.find((e) => e && typeof e === 'object' && e.name === name),
    field,
  );
};

/** Reads inline `<x>-data` (base64) or the file `<x>` of an entry. */
function material(entry: unknown, key: string, base: string): Buffer | undefined {
  const data = fieldAt(entry, `${key}-data`);
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64');
  const file = fieldAt(entry, key);
  if (typeof file === 'string' && file) return readFileSync(isAbsolute(file) ? file : join(base, file));
  return undefined;
}

/** Loads and checks a kubeconfig file; errors name the file (upstream's clientcmd messages where they exist). */
export function loadKubeconfig(path: string): WebhookClientConfig {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`invalid configuration file ${path}: ${(e as Error).message}`);
  }
  const base = dirname(path);
  const ctxName = fieldAt(doc, 'current-context');
  if (typeof ctxName !== 'string' || !ctxName)
    throw new Error(`invalid configuration file ${path}: no current context is set`);
  const ctx = named(fieldAt(doc, 'contexts'), ctxName, 'context');
  if (!ctx)
    throw new Error(`invalid configuration file ${path}: context was not found for specified context: ${ctxName}`);
  const cluster = named(fieldAt(doc, 'clusters'), String(fieldAt(ctx, 'cluster') ?? ''), 'cluster');
  if (!cluster) throw new Error(`invalid configuration file ${path}: cluster has no server defined`);
  const server = fieldAt(cluster, 'server');
  if (typeof server !== 'string' || !server)
    throw new Error(`invalid configuration file ${path}: cluster has no server defined`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new Error(`invalid configuration file ${path}: invalid server URL "${server}"`);
  }
  if (url.protocol !== 'https:')
    throw new Error(`invalid configuration file ${path}: server "${server}" must be an https:// URL`);
  const userName = fieldAt(ctx, 'user');
  const user = userName ? (named(fieldAt(doc, 'users'), String(userName), 'user') ?? {}) : {};
  const out: WebhookClientConfig = {
    server,
    insecureSkipTlsVerify: fieldAt(cluster, 'insecure-skip-tls-verify') === true,
  };
  try {
    const ca = material(cluster, 'certificate-authority', base),
      cert = material(user, 'client-certificate', base),
      key = material(user, 'client-key', base);
    if (ca) out.ca = ca;
    if (cert) out.cert = cert;
    if (key) out.key = key;
    const token = fieldAt(user, 'token'),
      tokenFile = fieldAt(user, 'tokenFile');
    if (typeof token === 'string' && token) out.token = token;
    else if (typeof tokenFile === 'string' && tokenFile)
      out.token = readFileSync(isAbsolute(tokenFile) ? tokenFile : join(base, tokenFile), 'utf8').trim();
  } catch (e) {
    throw new Error(`invalid configuration file ${path}: ${(e as Error).message}`);
  }
  if (!out.cert !== !out.key)
    throw new Error(
      `invalid configuration file ${path}: client-cert-data and client-key-data must both be specified for ${String(userName)} to use the clientCert authentication method`,
    );
  return out;
}

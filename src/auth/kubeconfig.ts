/**
 * The client configuration (kubeconfig) format as the API server reads it for its outbound
 * calls (token webhook): the current context's cluster (server, certificate authority,
 * insecure-skip-tls-verify) and user (client certificate and key, bearer token). Relative file
 * paths are relative to the kubeconfig's directory, as upstream clientcmd resolves them.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isRecord } from '../api/object.js';

export interface ClientConfig {
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecureSkipTLSVerify: boolean;
}

/** An entry, section or document of the file as decoded: every field is checked where read. */
type Raw = Record<string, unknown>;

/** A value read as an entry: a non-object has none of the fields read (like reading them off it). */
const raw = (v: unknown): Raw => (isRecord(v) ? v : {});

/** The `what` entry of `list` called `name`; throws when the list is no list or lacks it. */
function named(list: unknown, name: string, what: string): Raw {
  if (list !== undefined && list !== null && !Array.isArray(list)) throw new Error(`${what}s must be a list`);
  const hit = (list ?? []).find((e: unknown) => isRecord(e) && e.name === name);
  if (!hit) throw new Error(`${what} "${name}" not found`);
  return hit;
}

/** Parses kubeconfig text; `base` is the directory relative paths resolve against. */
export function parseClientConfig(text: string, base: string): ClientConfig {
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (e) {
    throw new Error(`cannot parse: ${(e as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object')
    throw new Error('invalid configuration: no configuration has been provided');
  const doc = raw(parsed);
  const ctxName = doc['current-context'];
  if (typeof ctxName !== 'string' || ctxName === '')
    throw new Error('invalid configuration: current-context must be set');
  const ctx = raw(named(doc.contexts, ctxName, 'context').context);
  const cluster = raw(named(doc.clusters, String(ctx.cluster ?? ''), 'cluster').cluster);
  const user = ctx.user ? raw(named(doc.users, String(ctx.user), 'user').user) : {};
  const server = cluster.server;
  if (typeof server !== 'string' || server === '')
    throw new Error(`invalid configuration: no server found for cluster "${ctx.cluster}"`);
  try {
    new URL(server);
  } catch {
    throw new Error(`invalid configuration: server "${server}" is not a URL`);
  }
  const file = (f: unknown, field: string): Buffer => {
    const path = resolve(base, String(f));
    try {
      return readFileSync(path);
    } catch (e) {
      throw new Error(`${field}: cannot read ${path}: ${(e as Error).message}`);
    }
  };
  const pem = (data: unknown, path: unknown, field: string): Buffer | undefined => {
    if (data !== undefined && path !== undefined)
      throw new Error(`${field}-data and ${field} are both specified; only one is allowed`);
    if (data !== undefined) return Buffer.from(String(data), 'base64');
    return path !== undefined ? file(path, field) : undefined;
  };
  const out: ClientConfig = {
    server,
    ca: pem(cluster['certificate-authority-data'], cluster['certificate-authority'], 'certificate-authority'),
    cert: pem(user['client-certificate-data'], user['client-certificate'], 'client-certificate'),
    key: pem(user['client-key-data'], user['client-key'], 'client-key'),
    insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
  };
  if (!out.cert !== !out.key) throw new Error('client-certificate and client-key must be given together');
  if (out.insecureSkipTLSVerify && out.ca)
    throw new Error('specifying a root certificates file with the insecure flag is not allowed');
  if (typeof user.token === 'string' && user.token) out.token = user.token;
  else if (user.tokenFile !== undefined) out.token = file(user.tokenFile, 'tokenFile').toString('utf8').trim();
  return out;
}

export function loadClientConfig(path: string): ClientConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as Error).message}`);
  }
  return parseClientConfig(text, dirname(resolve(path)));
}

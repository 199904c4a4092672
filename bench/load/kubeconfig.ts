/** The parts of a kubeconfig the bench client needs: server URL, CA, client cert/key or token. */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

export interface Credentials {
  server?: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecure?: boolean;
}

interface Named<T> {
  name: string;
  [k: string]: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}

export function loadKubeconfig(file: string, contextName?: string): Credentials {
  const doc = parse(readFileSync(file, 'utf8')) as Record<string, unknown> | null;
  if (!doc || typeof doc !== 'object') throw new Error(`${file}: not a kubeconfig`);
  const base = dirname(file);
  const pick = <T>(list: unknown, name: string | undefined, what: string): T => {
    const items = (Array.isArray(list) ? list : []) as Named<T>[];
    const hit = name === undefined ? items[0] : items.find((i) => i.name === name);
    if (!hit) throw new Error(`${file}: no ${what} ${name ?? ''}`.trim());
    return (hit.cluster ?? hit.user ?? hit.context ?? {}) as T;
  };
  const ctx = pick<Record<string, string>>(
    doc.contexts,
    contextName ?? (doc['current-context'] as string | undefined),
    'context',
  );
  const cluster = pick<Record<string, unknown>>(doc.clusters, ctx.cluster, 'cluster');
  const user = ctx.user === undefined ? {} : pick<Record<string, unknown>>(doc.users, ctx.user, 'user');
  const file_ = (p: unknown): Buffer => readFileSync(isAbsolute(String(p)) ? String(p) : join(base, String(p)));
  const data = (inline: unknown, path: unknown): Buffer | undefined =>
    typeof inline === 'string' ? Buffer.from(inline, 'base64') : typeof path === 'string' ? file_(path) : undefined;
  const token =
    typeof user.token === 'string'
      ? user.token
      : typeof user.tokenFile === 'string'
        ? file_(user.tokenFile).toString('utf8').trim()
        : undefined;
  return {
    server: typeof cluster.server === 'string' ? cluster.server : undefined,
    ca: data(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: data(user['client-certificate-data'], user['client-certificate']),
    key: data(user['client-key-data'], user['client-key']),
    token,
    insecure: cluster['insecure-skip-tls-verify'] === true,
  };
}

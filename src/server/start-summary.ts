/**
 * What the server logs around its life (src/server/log.ts): the start summary (version,
 * listeners, storage, authentication and authorization modes, admission plugins, feature
 * gates changed from their defaults), warnings for risky settings, and the shutdown lines.
 */
import { GIT_VERSION } from '../api/release.js';
import { defaultGates } from '../api/feature-gates.js';
import type { Logger } from './log.js';
import type { ServerOptions } from './options.js';

/** What the running server reports beside its options. */
export interface StartFacts {
  port: number;
  securePort: number | undefined;
  serviceAccountIssuer: string | undefined;
  kubeconfig: string | undefined;
}

/** The authenticators configured, in upstream's order. */
export function authenticationModes(o: ServerOptions, issuer: string | undefined): string[] {
  const modes: string[] = [];
  if (o.requestheaderClientCAFile) modes.push('RequestHeader');
  modes.push('X509');
  if (o.tokenAuthFile) modes.push('TokenFile');
  if (issuer) modes.push('ServiceAccount');
  if (o.enableBootstrapTokenAuth) modes.push('BootstrapToken');
  if (o.oidcIssuerURL || o.authenticationConfig) modes.push('JWT');
  if (o.authenticationTokenWebhookConfigFile) modes.push('Webhook');
  if (o.anonymousAuth) modes.push('Anonymous');
  return modes;
}

/** Feature gates whose value differs from the default, as Name=value. */
export function changedGates(o: ServerOptions): string[] {
  const defaults = defaultGates();
  return Object.entries(o.featureGates)
    .filter(([k, v]) => defaults[k] !== v)
    .map(([k, v]) => `${k}=${v}`)
    .sort();
}

export function logStartSummary(log: Logger, o: ServerOptions, f: StartFacts): void {
  const storage =
    o.storageBackend === 'lmdb'
      ? `lmdb ${o.dataDir} (${o.shards} shards)`
      : `etcd3 ${o.etcdServers.join(',')}${o.etcdPrefix} (${o.shards} shards)`;
  log.info('Starting platform-apiserver', { version: GIT_VERSION, apiDomain: o.apiDomain, node: process.version });
  log.info('Serving', {
    secure: f.securePort === undefined ? 'off' : `https://${o.bindAddress}:${f.securePort}`,
    plain: f.port > 0 ? `http://${o.insecureBindAddress}:${f.port}` : 'off',
    adminKubeconfig: f.kubeconfig,
  });
  log.info('Storage', { backend: storage });
  log.info('Authentication', {
    modes: authenticationModes(o, f.serviceAccountIssuer),
    serviceAccountIssuer: f.serviceAccountIssuer,
  });
  log.info('Authorization', {
    modes: o.authorizationConfigFile ? [`config:${o.authorizationConfigFile}`] : o.authorizationModes,
  });
  log.info('Admission', { plugins: [...o.admissionPlugins].sort() });
  log.info('Feature gates', { changed: changedGates(o) });
}

/** Warnings for settings that give away access or safety. */
export function logRiskyWarnings(log: Logger, o: ServerOptions, port: number): void {
  if (port > 0) {
    log.warn(
      `--port ${o.port === 0 ? port : o.port} serves without authentication or authorization: every request acts as system:unsecured in system:masters`,
      {
        address: `${o.insecureBindAddress}:${port}`,
        fix: 'use --port off and the secure port with the admin kubeconfig',
      },
    );
  }
  if ((o.authorizationModes as string[]).includes('AlwaysAllow') && !o.authorizationConfigFile) {
    log.warn('--authorization-mode AlwaysAllow: every authenticated request is allowed', {
      fix: 'use --authorization-mode Node,RBAC',
    });
  }
  if (o.securePort >= 0 && (o.bindAddress === '0.0.0.0' || o.bindAddress === '::') && o.anonymousAuth) {
    log.warn(
      `--bind-address ${o.bindAddress} with --anonymous-auth true: anonymous requests reach the secure port from every interface (RBAC still decides what they may do)`,
    );
  }
}

/**
 * The PKI of an extension API server test: a CA for the extension server (`ext-ca`), the
 * front-proxy CA and client the aggregator presents (`proxy-ca`, `proxy-client`), and the
 * extension server's certificate for `api.wardle.svc` (ext.crt/ext.key under pki.dir).
 */
import { writeFileSync } from 'node:fs';
import { Pki, openssl } from '../auth/helpers.js';

export function extensionServerPki(): Pki {
  const pki = new Pki();
  pki.ca('ext-ca').ca('proxy-ca').client('proxy-ca', 'proxy-client', '/CN=front-proxy-client');
  openssl(
    pki.dir,
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ext.key',
    '-out',
    'ext.csr',
    '-subj',
    '/CN=api',
  );
  writeFileSync(pki.path('ext.ext'), 'subjectAltName=DNS:api.wardle.svc\nextendedKeyUsage=serverAuth\n');
  openssl(
    pki.dir,
    'x509',
    '-req',
    '-in',
    'ext.csr',
    '-CA',
    'ext-ca.crt',
    '-CAkey',
    'ext-ca.key',
    '-CAcreateserial',
    '-out',
    'ext.crt',
    '-days',
    '1',
    '-extfile',
    'ext.ext',
  );
  return pki;
}

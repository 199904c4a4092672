/** A loopback HTTPS admission webhook for the tests: each path answers AdmissionReviews its own way. */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import type { AdmissionAttributes } from '../../src/admission/attributes.js';
import { openssl, type Pki } from '../auth/helpers.js';

export interface AdmissionAnswer {
  /** the AdmissionReview response fields besides uid (default: allowed) */
  response?: Record<string, unknown>;
  /** a JSON patch to return (base64-encoded with patchType JSONPatch) */
  patch?: unknown[];
  /** answer after this many milliseconds (for timeouts) */
  delayMs?: number;
  /**
   * the whole response body, sent exactly as given (nothing added: no uid, no `allowed`), for
   * answers a real webhook could send but the defaults above would hide
   */
  body?: unknown;
}

export interface AdmissionWebhook {
  /** https://127.0.0.1:<port> */
  base: string;
  /** base64 PEM of the serving CA, for clientConfig.caBundle */
  caBundle: string;
  /** every review received, with the path it came to */
  reviews: { path: string; review: any }[];
  /** per path (without query), what to answer */
  answers: Map<string, (review: any) => AdmissionAnswer>;
  close(): Promise<void>;
}

/** The serving certificate also names `dnsNames` (e.g. `<service>.<namespace>.svc`). */
export async function startAdmissionWebhook(pki: Pki, dnsNames: string[] = []): Promise<AdmissionWebhook> {
  pki.ca('admission-ca');
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
    'admission.key',
    '-out',
    'admission.csr',
    '-subj',
    '/CN=admission',
  );
  writeFileSync(
    pki.path('admission.ext'),
    `subjectAltName=${['DNS:localhost', 'IP:127.0.0.1', ...dnsNames.map((d) => `DNS:${d}`)].join(',')}\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(
    pki.dir,
    'x509',
    '-req',
    '-in',
    'admission.csr',
    '-CA',
    'admission-ca.crt',
    '-CAkey',
    'admission-ca.key',
    '-CAcreateserial',
    '-out',
    'admission.crt',
    '-days',
    '1',
    '-extfile',
    'admission.ext',
  );
  const timers = new Set<NodeJS.Timeout>();
  const hook: AdmissionWebhook = {
    base: '',
    caBundle: pki.read('admission-ca.crt').toString('base64'),
    reviews: [],
    answers: new Map(),
    close: async () => {},
  };
  const server: Server = createServer(
    { cert: pki.read('admission.crt'), key: pki.read('admission.key') },
    (req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (c) => {
        text += c;
      });
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0]!;
        let review: any;
        try {
          review = JSON.parse(text);
        } catch {
          review = {};
        }
        hook.reviews.push({ path, review });
        const a: AdmissionAnswer = (hook.answers.get(path) ?? (() => ({})))(review);
        const response: Record<string, unknown> = { uid: review.request?.uid, allowed: true, ...a.response };
        if (a.patch) {
          response.patchType = 'JSONPatch';
          response.patch = Buffer.from(JSON.stringify(a.patch)).toString('base64');
        }
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify(
              a.body !== undefined ? a.body : { apiVersion: review.apiVersion, kind: 'AdmissionReview', response },
            ),
          );
        };
        if (!a.delayMs) return send();
        const t = setTimeout(() => {
          timers.delete(t);
          send();
        }, a.delayMs);
        timers.add(t);
      });
    },
  );
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  hook.base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hook.close = () =>
    new Promise<void>((done) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => done());
    });
  return hook;
}

/** One webhook entry of a configuration: CREATE and UPDATE of configmaps unless rules say otherwise. */
export function webhook(
  name: string,
  url: string,
  caBundle: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name,
    clientConfig: { url, caBundle },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    ...extra,
  };
}

/**
 * The attributes of an in-process admission call: a cluster-scoped CREATE of configmap `x` by
 * user `u` (no object, no warnings or annotations yet), with `over` applied on top.
 */
export function attributes(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    group: '',
    version: 'v1',
    resource: 'configmaps',
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    namespace: '',
    name: 'x',
    namespaced: false,
    dryRun: false,
    user: { username: 'u', groups: [] },
    object: undefined,
    oldObject: undefined,
    options: {},
    warnings: [],
    annotations: {},
    ...over,
  };
}

/** A loopback HTTPS authorization webhook for the tests, and the kubeconfig naming it. */
import { before, after } from 'node:test';
import { createServer, type Server } from 'node:https';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Pki } from '../auth/helpers.js';

export interface WebhookReply {
  /** the SubjectAccessReview status to answer (default: no opinion) */
  status?: Record<string, unknown>;
  /** an HTTP status other than 200 */
  code?: number;
  /** a raw body instead of a review */
  raw?: string;
  /** answer after this many milliseconds (for timeouts) */
  delayMs?: number;
}

export interface TestWebhook {
  url: string;
  /** every review received, in order */
  reviews: any[];
  /** what to answer a review with; replaceable during a test */
  answer: (review: any) => WebhookReply;
  close(): Promise<void>;
}

/** Starts the webhook with a serving certificate from `pki` (CA `webhook-ca`, created once). */
export async function startWebhook(pki: Pki, answer: (review: any) => WebhookReply = () => ({})): Promise<TestWebhook> {
  pki.ca('webhook-ca').server('webhook-ca', 'webhook');
  const timers = new Set<NodeJS.Timeout>();
  const hook: TestWebhook = { url: '', reviews: [], answer, close: async () => {} };
  const server: Server = createServer({ cert: pki.read('webhook.crt'), key: pki.read('webhook.key') }, (req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      text += c;
    });
    req.on('end', () => {
      let review: any;
      try {
        review = JSON.parse(text);
      } catch {
        review = { unparsable: text };
      }
      hook.reviews.push(review);
      const r = hook.answer(review);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(r.code ?? 200, { 'content-type': 'application/json' });
        res.end(
          r.raw ??
            JSON.stringify({
              apiVersion: review.apiVersion,
              kind: 'SubjectAccessReview',
              status: r.status ?? { allowed: false },
            }),
        );
      };
      if (!r.delayMs) return send();
      const t = setTimeout(() => {
        timers.delete(t);
        send();
      }, r.delayMs);
      timers.add(t);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  hook.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
  hook.close = () =>
    new Promise<void>((done) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => done());
    });
  return hook;
}

/** Writes a kubeconfig naming the webhook (CA by file, relative to the kubeconfig) and returns its path. */
export function writeWebhookKubeconfig(pki: Pki, url: string, name = 'webhook.kubeconfig'): string {
  const path = pki.path(name);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: authz',
      '  cluster:',
      `    server: ${url}`,
      '    certificate-authority: webhook-ca.crt',
      'users:',
      '- name: apiserver',
      '  user:',
      '    token: apiserver-token',
      'contexts:',
      '- name: webhook',
      '  context:',
      '    cluster: authz',
      '    user: apiserver',
      'current-context: webhook',
      '',
    ].join('\n'),
  );
  return path;
}

export interface WebhookFixture {
  pki: Pki;
  hook: TestWebhook;
  /** the path of the kubeconfig naming the webhook */
  kubeconfig: string;
  /** starts a new webhook (after the test closed the old one) and rewrites the kubeconfig */
  restart(): Promise<void>;
}

/** A Pki, a webhook and its kubeconfig for the whole test file (registers its before and after hooks). */
export function webhookPerFile(): WebhookFixture {
  const f = {} as WebhookFixture;
  f.restart = async () => {
    f.hook = await startWebhook(f.pki);
    f.kubeconfig = writeWebhookKubeconfig(f.pki, f.hook.url);
  };
  before(async () => {
    f.pki = new Pki();
    await f.restart();
  });
  after(async () => {
    await f.hook?.close();
    f.pki?.cleanup();
  });
  return f;
}

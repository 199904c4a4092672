/** The CSR cleaner's rules (upstream csrcleaner) and one sweep against a fake actor pool. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CsrCleaner, cleanupReason } from '../../src/controllers/csr-cleaner.js';
import { makeIdentity } from '../../src/api/identity.js';

/** now, so that the certificate made below (valid for a day from now) is not expired yet */
const NOW = Math.floor(Date.now() / 1000) * 1000;
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace('.000Z', 'Z');
const H = 3_600_000;
const cond = (type: string, at: string) => ({ type, status: 'True', lastUpdateTime: at });
const csr = (name: string, created: string, conditions: any[] = [], certificate?: string) => ({
  metadata: { name, uid: `uid-${name}`, creationTimestamp: created },
  spec: {},
  status: { conditions, ...(certificate ? { certificate } : {}) },
});

function dayLongCert(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cleaner-'));
  try {
    execFileSync(
      '/usr/bin/openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'k'),
        '-out',
        join(dir, 'c'),
        '-days',
        '1',
        '-subj',
        '/CN=x',
      ],
      { stdio: 'ignore' },
    );
    return readFileSync(join(dir, 'c')).toString('base64');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const CERT = dayLongCert();

test('cleanup rules: 1h after approval (issued), denial or failure, 24h without conditions, expired certificates', () => {
  const rows: [string, any, string | undefined][] = [
    ['fresh pending', csr('a', ago(23 * H)), undefined],
    ['old pending', csr('b', ago(25 * H)), 'pending for more than 24h'],
    ['approved, not issued', csr('c', ago(48 * H), [cond('Approved', ago(2 * H))]), undefined],
    ['issued recently', csr('d', ago(2 * H), [cond('Approved', ago(30 * 60_000))], CERT), undefined],
    ['issued 1h ago', csr('e', ago(3 * H), [cond('Approved', ago(61 * 60_000))], CERT), 'issued more than 1h ago'],
    ['denied recently', csr('f', ago(2 * H), [cond('Denied', ago(10 * 60_000))]), undefined],
    ['denied 1h ago', csr('g', ago(2 * H), [cond('Denied', ago(2 * H))]), 'denied more than 1h ago'],
    [
      'failed 1h ago',
      csr('h', ago(2 * H), [cond('Approved', ago(2 * H)), cond('Failed', ago(2 * H))]),
      'failed more than 1h ago',
    ],
  ];
  for (const [label, obj, want] of rows) assert.equal(cleanupReason(obj, NOW), want, label);
  // the certificate made above expires in a day: a day and a minute later it has
  const later = NOW + 24 * H + 60_000;
  const issued = csr(
    'i',
    new Date(later - 10 * 60_000).toISOString(),
    [cond('Approved', new Date(later - 10 * 60_000).toISOString())],
    CERT,
  );
  assert.equal(cleanupReason(issued, later), 'its certificate expired');
});

test('a sweep deletes what is due, with the uid as precondition', async () => {
  const items = [csr('old', ago(25 * H)), csr('new', ago(H))];
  const ops: any[] = [];
  const pool = {
    async submit(op: any) {
      ops.push(op);
      if (op.op === 'list')
        return { id: 0, code: 200, body: JSON.stringify({ items }), contentType: 'application/json' };
      return { id: 0, code: 200, body: '{}', contentType: 'application/json' };
    },
  };
  const deleted = await new CsrCleaner(pool as any, makeIdentity()).sweep(NOW);
  assert.deepEqual(deleted, ['old']);
  const del = ops.find((o) => o.op === 'delete');
  assert.deepEqual(
    [del.name, del.options, del.type.group],
    ['old', { preconditions: { uid: 'uid-old' } }, 'certificates.plat.io'],
  );
});

/** Table cells that follow upstream printers: HumanDuration and the CSR Condition column. */
import { test, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { humanDuration, tableJson, toTable, type IncludeObject } from '../../src/codec/table.js';

test('humanDuration matches apimachinery duration.HumanDuration', () => {
  const rows: [number, string][] = [
    [-5, '<invalid>'], [-1, '0s'], [0, '0s'], [119, '119s'], [120, '2m'], [150, '2m30s'], [600, '10m'], [3600, '60m'],
    [3 * 3600, '3h'], [3 * 3600 + 120, '3h2m'], [8 * 3600, '8h'], [47 * 3600, '47h'], [48 * 3600, '2d'], [50 * 3600, '2d2h'],
    [30 * 86400, '30d'], [365 * 86400, '365d'], [800 * 86400, '2y70d'], [3000 * 86400, '8y'],
  ];
  for (const [s, want] of rows) assert.equal(humanDuration(s), want, String(s));
});

test('CertificateSigningRequest rows: SignerName, Requestor, RequestedDuration, Condition', () => {
  const csr = (status: any, spec: any = {}) => ({ metadata: { name: 'c', creationTimestamp: '2025-01-01T00:00:00Z' }, spec: { signerName: 's.io/x', username: 'u', ...spec }, status });
  const t = toTable('CertificateSigningRequest', [
    csr({}), csr({ conditions: [{ type: 'Approved' }], certificate: 'Y2VydA==' }, { expirationSeconds: 86400 }),
    csr({ conditions: [{ type: 'Approved' }, { type: 'Failed' }] }), csr({ conditions: [{ type: 'Denied' }] }, { signerName: '' }),
  ], {}, 'meta.plat.io/v1', 'None', Date.parse('2025-01-01T00:01:00Z'));
  assert.deepEqual(t.columnDefinitions.map((c: any) => c.name), ['Name', 'Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition']);
  assert.deepEqual(t.rows.map((r: any) => r.cells.slice(2)), [
    ['s.io/x', 'u', '<none>', 'Pending'], ['s.io/x', 'u', '24h', 'Approved,Issued'], ['s.io/x', 'u', '<none>', 'Approved,Failed'], ['<none>', 'u', '<none>', 'Denied'],
  ]);
});


const ROOT = new URL('../../../', import.meta.url);
const pod = JSON.parse(readFileSync(new URL('test/fixtures/protobuf/pod.json', ROOT), 'utf8'));
const lease = JSON.parse(readFileSync(new URL('test/fixtures/protobuf/lease.json', ROOT), 'utf8'));

describe('tableJson (the JSON Table list path)', () => {
  for (const [kind, obj] of [['Pod', pod], ['Lease', lease]] as const) {
    for (const include of ['None', 'Metadata', 'Object'] as IncludeObject[]) {
      it(`is the same document as toTable for ${kind}, includeObject=${include}`, () => {
        const objs = [0, 1, 2].map((i) => ({ ...obj, metadata: { ...obj.metadata, name: `n${i}` } }));
        const entries = objs.map((o) => ({ obj: o, json: JSON.stringify(o) }));
        const meta = { resourceVersion: '5', continue: 'x' };
        const now = Date.parse('2030-01-01T00:00:00Z');
        assert.equal(tableJson(kind, entries, meta, 'meta.plat.io/v1', include, now), JSON.stringify(toTable(kind, objs, meta, 'meta.plat.io/v1', include, now)));
      });
    }
  }

  it('caches each entry\'s metadata JSON', () => {
    const e: { obj: any; json: string; metaJson?: string } = { obj: pod, json: JSON.stringify(pod) };
    tableJson('Pod', [e], {}, 'meta.plat.io/v1', 'Metadata', 0);
    assert.equal(e.metaJson, JSON.stringify(pod.metadata));
  });
});

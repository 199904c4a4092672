/** Table cells that follow upstream printers: HumanDuration and the CSR Condition column. */
import { test, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { humanDuration, tableJson, toTable, type IncludeObject } from '../../src/codec/table.js';

test('humanDuration matches apimachinery duration.HumanDuration', () => {
  const rows: [number, string][] = [
    [-5, '<invalid>'],
    [-1, '0s'],
    [0, '0s'],
    [119, '119s'],
    [120, '2m'],
    [150, '2m30s'],
    [600, '10m'],
    [3600, '60m'],
    [3 * 3600, '3h'],
    [3 * 3600 + 120, '3h2m'],
    [8 * 3600, '8h'],
    [47 * 3600, '47h'],
    [48 * 3600, '2d'],
    [50 * 3600, '2d2h'],
    [30 * 86400, '30d'],
    [365 * 86400, '365d'],
    [800 * 86400, '2y70d'],
    [3000 * 86400, '8y'],
  ];
  for (const [s, want] of rows) assert.equal(humanDuration(s), want, String(s));
});

test('CertificateSigningRequest rows: SignerName, Requestor, RequestedDuration, Condition', () => {
  const csr = (status: any, spec: any = {}) => ({
    metadata: { name: 'c', creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: { signerName: 's.io/x', username: 'u', ...spec },
    status,
  });
  const t = toTable(
    'CertificateSigningRequest',
    [
      csr({}),
      csr({ conditions: [{ type: 'Approved' }], certificate: 'Y2VydA==' }, { expirationSeconds: 86400 }),
      csr({ conditions: [{ type: 'Approved' }, { type: 'Failed' }] }),
      csr({ conditions: [{ type: 'Denied' }] }, { signerName: '' }),
    ],
    {},
    'meta.plat.io/v1',
    'None',
    Date.parse('2025-01-01T00:01:00Z'),
  );
  assert.deepEqual(
    t.columnDefinitions.map((c: any) => c.name),
    ['Name', 'Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition'],
  );
  assert.deepEqual(
    t.rows.map((r: any) => r.cells.slice(2)),
    [
      ['s.io/x', 'u', '<none>', 'Pending'],
      ['s.io/x', 'u', '24h', 'Approved,Issued'],
      ['s.io/x', 'u', '<none>', 'Approved,Failed'],
      ['<none>', 'u', '<none>', 'Denied'],
    ],
  );
});

const ROOT = new URL('../../../', import.meta.url);
const pod = JSON.parse(readFileSync(new URL('test/fixtures/protobuf/pod.json', ROOT), 'utf8'));
const lease = JSON.parse(readFileSync(new URL('test/fixtures/protobuf/lease.json', ROOT), 'utf8'));

/**
 * The expected Table, written from upstream's printers (pkg/printers/internalversion: printLease,
 * printPod) and the fixtures, not from either implementation path: columns (name, type, format,
 * priority) and every cell. Age at 2030-01-01T00:00:00Z of an object created 2024-05-06T07:08:09Z
 * is 2065 whole days: HumanDuration "5y240d".
 */
const EXPECTED: Record<
  'Pod' | 'Lease',
  { columns: [string, string, string, number][]; cells: (name: string) => unknown[] }
> = {
  Lease: {
    columns: [
      ['Name', 'string', 'name', 0],
      ['Holder', 'string', '', 0],
      ['Age', 'string', '', 0],
    ],
    cells: (name) => [name, 'node-3', '5y240d'],
  },
  Pod: {
    columns: [
      ['Name', 'string', 'name', 0],
      ['Ready', 'string', '', 0],
      ['Status', 'string', '', 0],
      ['Restarts', 'string', '', 0],
      ['Age', 'string', '', 0],
      ['IP', 'string', '', 1],
      ['Node', 'string', '', 1],
      ['Nominated Node', 'string', '', 1],
      ['Readiness Gates', 'string', '', 1],
    ],
    cells: (name) => [name, '1/1', 'Running', '0', '5y240d', '10.244.3.17', 'node-3', '<none>', '<none>'],
  },
};

describe('tableJson (the JSON Table list path)', () => {
  for (const [kind, obj] of [
    ['Pod', pod],
    ['Lease', lease],
  ] as const) {
    for (const include of ['None', 'Metadata', 'Object'] as IncludeObject[]) {
      it(`prints the expected ${kind} Table with includeObject=${include}, the same document as toTable`, () => {
        const objs = [0, 1, 2].map((i) => ({ ...obj, metadata: { ...obj.metadata, name: `n${i}` } }));
        const entries = objs.map((o) => ({ obj: o, json: JSON.stringify(o) }));
        const meta = { resourceVersion: '5', continue: 'x' };
        const now = Date.parse('2030-01-01T00:00:00Z');
        const got = JSON.parse(tableJson(kind, entries, meta, 'meta.plat.io/v1', include, now));
        const want = EXPECTED[kind];
        assert.deepEqual(Object.keys(got), ['kind', 'apiVersion', 'metadata', 'columnDefinitions', 'rows']);
        assert.deepEqual(
          [got.kind, got.apiVersion, got.metadata],
          ['Table', 'meta.plat.io/v1', { resourceVersion: '5', continue: 'x' }],
        );
        assert.deepEqual(
          got.columnDefinitions.map((c: any) => [c.name, c.type, c.format, c.priority]),
          want.columns,
        );
        for (const c of got.columnDefinitions)
          assert.ok(typeof c.description === 'string' && c.description.length > 0, c.name);
        assert.deepEqual(
          got.rows,
          objs.map((o) => {
            const row: Record<string, unknown> = { cells: want.cells(o.metadata.name) };
            if (include === 'Metadata')
              row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.plat.io/v1', metadata: o.metadata };
            if (include === 'Object') row.object = o;
            return row;
          }),
        );
        // the fast path and the general one agree byte for byte
        assert.equal(JSON.stringify(got), JSON.stringify(toTable(kind, objs, meta, 'meta.plat.io/v1', include, now)));
      });
    }
  }

  it("caches each entry's metadata JSON", () => {
    const e: { obj: any; json: string; metaJson?: string } = { obj: pod, json: JSON.stringify(pod) };
    tableJson('Pod', [e], {}, 'meta.plat.io/v1', 'Metadata', 0);
    assert.equal(e.metaJson, JSON.stringify(pod.metadata));
  });
});

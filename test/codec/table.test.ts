import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tableJson, toTable, type IncludeObject } from '../../src/codec/table.js';

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

/**
 * managedFields come out in upstream's order (Apply before Update, then time, manager,
 * apiVersion, subresource), however many entries: write() sorts them by insertion for a few and
 * by Array.prototype.sort past sixteen. Seeded managers applying and updating at shuffled times;
 * the entries must be exactly their list sorted by `order`, ties kept in their previous order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, order, recordUpdate, type ManagedFieldsEntry } from '../../src/apply/managed-fields.js';
import { schemaIndex } from '../../src/schema/schema.js';
import { mulberry32 } from '../../bench/lib/mulberry32.js';

const schema = schemaIndex().forKind('', 'v1', 'ConfigMap');
const target = { kind: 'ConfigMap', group: '', name: 'c' };
const TIMES = ['2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', '2026-01-01T00:00:02Z'];

for (const managers of [2, 3, 7, 16, 17, 24]) {
  test(`${managers} managers: entries in order`, () => {
    const r = mulberry32(managers);
    let live: Record<string, unknown> | undefined;
    for (let step = 0; step < managers * 3; step++) {
      const m = `m${Math.floor(r() * managers)}`;
      const now = TIMES[Math.floor(r() * TIMES.length)]!;
      const data = { [`${m}-${step % 4}`]: String(step) };
      if (!live || r() < 0.6) {
        const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data };
        live = apply(live, body, schema, m, 'v1', now, true, target);
      } else {
        const next = structuredClone(live) as { data?: Record<string, string>; metadata: Record<string, unknown> };
        next.data = { ...(next.data ?? {}), ...data };
        recordUpdate(next, live, schema, m, r() < 0.5 ? 'v1' : 'v1beta1', now);
        live = next;
      }
      const entries = (live as { metadata: { managedFields: ManagedFieldsEntry[] } }).metadata.managedFields;
      assert.deepEqual(entries, [...entries].sort(order));
    }
    const n = (live as { metadata: { managedFields: unknown[] } }).metadata.managedFields.length;
    assert.ok(n >= Math.min(managers, 3), `${n} entries`);
  });
}

/**
 * The ResourceQuota plugin's `handles` in process: it is asked on every write and must answer
 * without work, so with no ResourceQuota stored anywhere it handles nothing (the write skips
 * admission's preview entirely). Found untested by the mutation sample (seed 27); quota
 * enforcement itself is in resource-quota.test.ts and quota-usage.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResourceQuotaPlugin } from '../../src/admission/resource-quota.js';
import type { RequestAttributes } from '../../src/admission/attributes.js';
import type { ReadCache } from '../../src/actors/read-cache.js';
import { attributes } from './helpers.js';

const withQuotas = (n: number) => {
  const asked: string[] = [];
  const cache = {
    count: (typeKey: string) => {
      asked.push(typeKey);
      return typeKey === '/resourcequotas' ? n : 7;
    },
  } as unknown as ReadCache;
  return { plugin: new ResourceQuotaPlugin(cache), asked };
};

const attrs = (over: Partial<RequestAttributes> = {}): RequestAttributes =>
  attributes({ namespace: 'ns', name: 'c', namespaced: true, ...over });

test('no ResourceQuota stored: the plugin handles no write', () => {
  const { plugin, asked } = withQuotas(0);
  assert.equal(plugin.handles(attrs()), false);
  assert.equal(plugin.handles(attrs({ resource: 'pods', kind: { group: '', version: 'v1', kind: 'Pod' } })), false);
  assert.deepEqual(asked, ['/resourcequotas', '/resourcequotas']);
});

test('with a ResourceQuota stored: namespaced creates only (no update, subresource or cluster-scoped write)', () => {
  const { plugin } = withQuotas(1);
  assert.equal(plugin.handles(attrs()), true);
  assert.equal(plugin.handles(attrs({ operation: 'UPDATE' })), false);
  assert.equal(plugin.handles(attrs({ subresource: 'status' })), false);
  assert.equal(plugin.handles(attrs({ namespaced: false, namespace: '', resource: 'namespaces' })), false);
});

/** The check every failure answer must pass: a v1 Status body with the code, reason and a message. */
import assert from 'node:assert/strict';
import type { Reply } from './server.js';

export function assertStatus(r: Reply, code: number, reason: string): void {
  assert.equal(r.status, code, `HTTP ${r.status}: ${r.text.slice(0, 300)}`);
  assert.ok(r.json, `not a JSON Status body: ${r.text.slice(0, 300)}`);
  assert.equal(r.json.kind, 'Status');
  assert.equal(r.json.apiVersion, 'v1');
  assert.equal(r.json.status, 'Failure');
  assert.equal(r.json.code, code);
  assert.equal(r.json.reason, reason);
  assert.equal(typeof r.json.message, 'string');
  assert.ok(r.json.message.length > 0);
}

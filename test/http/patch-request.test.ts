/**
 * src/http/patch-request.ts keeps the last Content-Type's media type: requests with other
 * headers in turn (parameters, case, spaces, no header) must each get their own patch type.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isApplyPatch, patchBody, patchOf } from '../../src/http/patch-request.js';
import type { Request } from '../../src/http/context.js';

const request = (contentType: string | undefined, custom = false) =>
  ({ headers: { contentType }, def: { custom }, info: { verb: 'patch' } }) as unknown as Request;

test('each request gets the patch type of its own Content-Type, whatever came before', () => {
  const cases: [string | undefined, string | undefined][] = [
    ['application/apply-patch+yaml', 'apply'],
    ['application/merge-patch+json; charset=utf-8', 'merge'],
    ['Application/Apply-Patch+YAML', 'apply'],
    ['application/json-patch+json', 'json'],
    ['application/apply-patch+yaml', 'apply'],
    [' application/strategic-merge-patch+json ;x=y', 'strategic'],
    ['application/json', undefined],
    [undefined, undefined],
    ['application/apply-patch+json', 'apply'],
    ['application/apply-patch+yaml', 'apply'],
    ['', undefined],
    ['application/apply-patch+cbor', 'apply'],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [ct, want] of cases) {
      const r = request(ct);
      const cbor = ct === 'application/apply-patch+cbor';
      assert.equal(isApplyPatch(r), want === 'apply', `${ct}`);
      const body = patchBody(r, Buffer.from(cbor ? [0xa0] : '{}'));
      assert.equal(body.contentType, cbor ? 'cbor' : 'json', `${ct}`);
      if (want === undefined) assert.throws(() => patchOf(r, body, false), /unknown format/, `${ct}`);
      else assert.equal(patchOf(r, body, true).patchType, want, `${ct}`);
    }
  }
  // a custom resource takes no strategic merge patch, right after a built-in one did
  assert.equal(
    patchOf(request('application/strategic-merge-patch+json'), { text: '{}', contentType: 'json' }, false).patchType,
    'strategic',
  );
  assert.throws(
    () => patchOf(request('application/strategic-merge-patch+json', true), { text: '{}', contentType: 'json' }, false),
    /unknown format/,
  );
});

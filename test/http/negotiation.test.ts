import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  bodyFormat,
  negotiate,
  negotiateResource,
  parseAccept,
  type NegotiateOptions,
} from '../../src/http/negotiation.js';
import { makeIdentity } from '../../src/api/identity.js';
import type { StatusError } from '../../src/api/status.js';

const PB = 'application/vnd.platform.protobuf';
const table = (m: { params: Record<string, string> }, f: string) =>
  m.params.as === 'Table' && (f === 'json' || f === 'yaml');
const full: NegotiateOptions = { protobufType: PB, cbor: true, canServe: table };
const code = (f: () => unknown) => {
  try {
    f();
    return 200;
  } catch (e) {
    return (e as StatusError).status.code;
  }
};

describe('negotiate', () => {
  const cases: [string, string | undefined, NegotiateOptions, string | number][] = [
    ['no Accept is JSON', undefined, full, 'json'],
    ['wildcards are JSON', '*/*', full, 'json'],
    ['Protobuf when offered', PB, full, 'protobuf'],
    ['Protobuf not offered: the fallback', `${PB}, application/json`, {}, 'json'],
    ['Protobuf not offered, alone: 406', PB, {}, 406],
    ['CBOR only with the gate', 'application/cbor', {}, 406],
    ['CBOR with the gate', 'application/cbor', full, 'cbor'],
    ['q orders before position', 'application/json;q=0.5, application/yaml', full, 'yaml'],
    ['equal q keeps the written order', 'application/yaml, application/json', full, 'yaml'],
    ['q=0 is not acceptable', 'application/yaml;q=0', full, 406],
    ['a servable view', 'application/json;as=Table;g=meta.plat.io;v=v1', full, 'json+Table'],
    ['a view in a format it has not: next range', `${PB};as=Table;g=meta.plat.io;v=v1, application/yaml`, full, 'yaml'],
    ['unknown types are skipped', 'text/html, application/yaml', full, 'yaml'],
    [
      'watch: YAML first is 406 even with a later JSON',
      'application/yaml, application/json',
      { ...full, stream: true },
      406,
    ],
    ['watch: cbor-seq names CBOR', 'application/cbor-seq', { ...full, stream: true }, 'cbor'],
  ];
  for (const [what, accept, o, want] of cases) {
    it(what, () => {
      if (typeof want === 'number')
        return assert.equal(
          code(() => negotiate(accept, false, o)),
          want,
        );
      const enc = negotiate(accept, false, o);
      assert.equal(enc.as ? `${enc.format}+${enc.as.params.as}` : enc.format, want);
    });
  }

  it('406 lists what is offered', () => {
    assert.throws(
      () => negotiate('text/csv', false, full),
      (e: StatusError) =>
        e.status.message ===
        `only the following media types are accepted: application/json, application/yaml, ${PB}, application/cbor`,
    );
  });

  it('parses parameters case-insensitively and drops empty ranges', () => {
    assert.deepEqual(parseAccept('Application/JSON;AS=Table ,, '), [
      { type: 'application/json', params: { as: 'Table' } },
    ]);
  });
});

describe('bodyFormat', () => {
  it('maps Content-Type to a body format; unknown is 415 listing the accepted types', () => {
    assert.equal(bodyFormat(undefined, PB), 'json');
    assert.equal(bodyFormat('application/json', PB), 'json');
    assert.equal(bodyFormat('Application/JSON', PB), 'json');
    assert.equal(bodyFormat('application/json; charset=utf-8', PB), 'json');
    assert.equal(bodyFormat('application/vnd.kubernetes.protobuf', PB), 'protobuf');
    assert.equal(bodyFormat('application/cbor', PB, true), 'cbor');
    assert.throws(
      () => bodyFormat('application/cbor', PB, false),
      (e: StatusError) =>
        e.status.code === 415 &&
        e.status.message ===
          `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, ${PB}`,
    );
  });
});

describe('negotiateResource, remembered per Accept header', () => {
  const identity = makeIdentity();
  const q = (s = '') => new URLSearchParams(s);
  const tableAccept = `application/json;as=Table;v=v1;g=meta.${identity.domain},application/json`;
  it('gives each request its own Encoding, with its own pretty flag and view parameters', () => {
    const a = negotiateResource(identity, false, tableAccept, false, q(), 'list', false);
    const b = negotiateResource(identity, false, tableAccept, true, q('includeObject=Object'), 'list', false);
    assert.notEqual(a, b);
    a.gzip = true;
    assert.equal(b.gzip, undefined);
    assert.deepEqual(
      [a.view?.includeObject, b.view?.includeObject, a.pretty, b.pretty],
      ['Metadata', 'Object', false, true],
    );
    assert.equal(
      code(() => negotiateResource(identity, false, tableAccept, false, q('includeObject=x'), 'list', false)),
      400,
    );
  });
  it('keeps the verb, custom-resource and CBOR distinctions of the first answer', () => {
    const pb = identity.protobufMediaType;
    assert.equal(negotiateResource(identity, false, pb, false, q(), 'get', false).format, 'protobuf');
    assert.equal(
      code(() => negotiateResource(identity, false, pb, false, q(), 'get', true)),
      406,
    );
    assert.equal(
      code(() => negotiateResource(identity, false, 'application/cbor', false, q(), 'get', false)),
      406,
    );
    assert.equal(negotiateResource(identity, true, 'application/cbor', false, q(), 'get', false).format, 'cbor');
    assert.equal(negotiateResource(identity, false, 'application/yaml', false, q(), 'get', false).format, 'yaml');
    assert.equal(
      code(() => negotiateResource(identity, false, 'application/yaml', false, q(), 'watch', false)),
      406,
    );
    assert.equal(negotiateResource(identity, false, tableAccept, false, q(), 'get', false).view?.as, 'Table');
  });
});

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { openWatch } from '../helpers/watch.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const CORE = (ns: string) => `/api/v1/namespaces/${ns}/events`;
const V1 = (ns: string) => `/apis/events.plat.io/v1/namespaces/${ns}/events`;

const regarding = {
  kind: 'Pod',
  namespace: 'default',
  name: 'web-1',
  uid: 'u-1',
  apiVersion: 'v1',
  fieldPath: 'spec.containers{c}',
};

function coreEvent(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: regarding,
    reason: 'Pulled',
    message: 'pulled the image',
    source: { component: 'nodeagent', host: 'node-1' },
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:01:00Z',
    count: 3,
    type: 'Normal',
    reportingComponent: 'nodeagent',
    reportingInstance: 'node-1',
  };
}

function v1Event(name: string, target = regarding) {
  return {
    apiVersion: 'events.plat.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2025-01-01T00:00:00.000000Z',
    series: { count: 2, lastObservedTime: '2025-01-01T00:05:00.000000Z' },
    reportingController: 'platform.io/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Binding',
    reason: 'Scheduled',
    regarding: target,
    related: { kind: 'Node', name: 'node-1', apiVersion: 'v1' },
    note: 'assigned to node-1',
    type: 'Normal',
  };
}

test('a core Event reads through events.plat.io/v1 with the upstream field mapping, same object and version', async () => {
  const c = await request(s.url, 'POST', CORE('default'), coreEvent('core-made'));
  assert.equal(c.status, 201, c.text);
  const g = await request(s.url, 'GET', `${V1('default')}/core-made`);
  assert.equal(g.status, 200, g.text);
  const e = g.json;
  assert.equal(e.apiVersion, 'events.plat.io/v1');
  assert.equal(e.kind, 'Event');
  assert.deepEqual(e.regarding, regarding);
  assert.equal(e.note, 'pulled the image');
  assert.deepEqual(e.deprecatedSource, { component: 'nodeagent', host: 'node-1' });
  assert.equal(e.deprecatedFirstTimestamp, '2025-01-01T00:00:00Z');
  assert.equal(e.deprecatedLastTimestamp, '2025-01-01T00:01:00Z');
  assert.equal(e.deprecatedCount, 3);
  assert.equal(e.reportingController, 'nodeagent');
  assert.equal(e.reportingInstance, 'node-1');
  assert.equal(e.reason, 'Pulled');
  assert.equal(e.type, 'Normal');
  for (const f of [
    'involvedObject',
    'message',
    'source',
    'firstTimestamp',
    'lastTimestamp',
    'count',
    'reportingComponent',
  ])
    assert.ok(!(f in e), `no core field ${f}`);
  assert.equal(e.metadata.uid, c.json.metadata.uid);
  assert.equal(e.metadata.resourceVersion, c.json.metadata.resourceVersion);

  const l = await request(s.url, 'GET', V1('default'));
  assert.equal(l.status, 200, l.text);
  assert.equal(l.json.kind, 'EventList');
  assert.equal(l.json.apiVersion, 'events.plat.io/v1');
  const item = l.json.items.find((i: any) => i.metadata.name === 'core-made');
  assert.equal(item.apiVersion, 'events.plat.io/v1');
  assert.equal(item.note, 'pulled the image');
  // one resourceVersion space: both lists are at the same version
  const cl = await request(s.url, 'GET', CORE('default'));
  assert.ok(Number(l.json.metadata.resourceVersion) >= Number(c.json.metadata.resourceVersion));
  assert.ok(Number(cl.json.metadata.resourceVersion) >= Number(l.json.metadata.resourceVersion));
});

test('an events.plat.io/v1 Event reads through core v1; updates through either view are seen by the other, with the v1 update rules', async () => {
  const c = await request(s.url, 'POST', V1('default'), v1Event('v1-made'));
  assert.equal(c.status, 201, c.text);
  assert.equal(c.json.apiVersion, 'events.plat.io/v1');
  assert.equal(c.json.note, 'assigned to node-1');
  assert.deepEqual(
    Object.keys(c.json),
    [
      'kind',
      'apiVersion',
      'metadata',
      'eventTime',
      'series',
      'reportingController',
      'reportingInstance',
      'action',
      'reason',
      'regarding',
      'related',
      'note',
      'type',
    ],
    'fields in upstream order',
  );
  const core = (await request(s.url, 'GET', `${CORE('default')}/v1-made`)).json;
  assert.equal(core.apiVersion, 'v1');
  assert.deepEqual(core.involvedObject, regarding);
  assert.equal(core.message, 'assigned to node-1');
  assert.equal(core.reportingComponent, 'platform.io/scheduler');
  assert.equal(core.reportingInstance, 'scheduler-1');
  assert.equal(core.eventTime, '2025-01-01T00:00:00.000000Z');
  assert.deepEqual(core.series, { count: 2, lastObservedTime: '2025-01-01T00:05:00.000000Z' });
  assert.deepEqual(core.related, { kind: 'Node', name: 'node-1', apiVersion: 'v1' });
  assert.equal(core.action, 'Binding');
  for (const f of ['regarding', 'note', 'reportingController', 'deprecatedSource'])
    assert.ok(!(f in core), `no events.plat.io field ${f}`);

  // PUT through events.plat.io with the resourceVersion the core view showed: series may change
  const put = {
    ...c.json,
    series: { count: 3, lastObservedTime: '2025-01-01T00:06:00.000000Z' },
    metadata: { ...c.json.metadata, resourceVersion: core.metadata.resourceVersion },
  };
  const u = await request(s.url, 'PUT', `${V1('default')}/v1-made`, put);
  assert.equal(u.status, 200, u.text);
  assert.equal(u.json.series.count, 3);
  const core2 = (await request(s.url, 'GET', `${CORE('default')}/v1-made`)).json;
  assert.equal(core2.series.count, 3);
  assert.equal(core2.metadata.resourceVersion, u.json.metadata.resourceVersion);
  assert.ok(Number(core2.metadata.resourceVersion) > Number(core.metadata.resourceVersion));

  // a stale resourceVersion through the other view conflicts
  const stale = await request(s.url, 'PUT', `${CORE('default')}/v1-made`, { ...core, message: 'stale' });
  assert.equal(stale.status, 409, stale.text);

  // merge patch through core (no update rules there), seen through events.plat.io
  const p = await request(
    s.url,
    'PATCH',
    `${CORE('default')}/v1-made`,
    { message: 'patched' },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(p.status, 200, p.text);
  assert.equal(p.json.message, 'patched');
  const v = (await request(s.url, 'GET', `${V1('default')}/v1-made`)).json;
  assert.equal(v.note, 'patched');
  assert.equal(v.reportingController, 'platform.io/scheduler');

  // through events.plat.io/v1 the note is immutable (upstream ValidateEventUpdate, core field paths)
  const p2 = await request(
    s.url,
    'PATCH',
    `${V1('default')}/v1-made`,
    { note: 'patched again', series: { count: 1 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(p2.status, 422, p2.text);
  assert.deepEqual(p2.json.details.causes.map((c: any) => [c.field, c.reason]).sort(), [
    ['message', 'FieldValueInvalid'],
    ['series.count', 'FieldValueInvalid'],
  ]);
  assert.match(p2.json.details.causes.find((c: any) => c.field === 'message').message, /field is immutable/);
  assert.equal((await request(s.url, 'GET', `${CORE('default')}/v1-made`)).json.message, 'patched');

  // delete through events.plat.io: gone from core
  const d = await request(s.url, 'DELETE', `${V1('default')}/v1-made`);
  assert.equal(d.status, 200, d.text);
  assert.equal((await request(s.url, 'GET', `${CORE('default')}/v1-made`)).status, 404);
});

test('the events.plat.io/v1 create rules still apply to creates through that view only', async () => {
  const bad = await request(s.url, 'POST', V1('default'), {
    ...v1Event('bad'),
    reportingController: undefined,
    deprecatedCount: 2,
  });
  assert.equal(bad.status, 422, bad.text);
  const fields = bad.json.details.causes.map((c: any) => c.field).sort();
  assert.deepEqual(fields, ['count', 'reportingController']);
  const core = await request(s.url, 'POST', CORE('default'), {
    metadata: { name: 'lenient' },
    involvedObject: regarding,
    count: 1,
  });
  assert.equal(core.status, 201, core.text);
  // read back through events.plat.io/v1 (no eventTime) and written unchanged but for a label: accepted, as upstream
  const seen = (await request(s.url, 'GET', `${V1('default')}/lenient`)).json;
  const relabelled = await request(s.url, 'PUT', `${V1('default')}/lenient`, {
    ...seen,
    metadata: { ...seen.metadata, labels: { a: 'b' } },
  });
  assert.equal(relabelled.status, 200, relabelled.text);
});

test('field selectors: events.plat.io/v1 labels (regarding.*, reportingController) map to the stored fields', async () => {
  await request(s.url, 'POST', CORE('default'), {
    ...coreEvent('sel-a'),
    involvedObject: { ...regarding, name: 'sel-target' },
  });
  const l = await request(
    s.url,
    'GET',
    `${V1('default')}?fieldSelector=${encodeURIComponent('regarding.name=sel-target,reportingController=nodeagent')}`,
  );
  assert.equal(l.status, 200, l.text);
  assert.deepEqual(
    l.json.items.map((i: any) => i.metadata.name),
    ['sel-a'],
  );
  const bad = await request(s.url, 'GET', `${V1('default')}?fieldSelector=involvedObject.name%3Dx`);
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.json.message, 'field label not supported: involvedObject.name');
  const core = await request(s.url, 'GET', `${CORE('default')}?fieldSelector=involvedObject.name%3Dsel-target`);
  assert.deepEqual(
    core.json.items.map((i: any) => i.metadata.name),
    ['sel-a'],
  );
});

test('watches through one view see writes through the other, converted; selectors on the renamed labels work live', async () => {
  const start = (await request(s.url, 'GET', CORE('default'))).json.metadata.resourceVersion;
  const wv1 = await openWatch(s.url, `${V1('default')}?watch=true&resourceVersion=${start}`);
  const wsel = await openWatch(
    s.url,
    `${V1('default')}?watch=true&resourceVersion=${start}&fieldSelector=${encodeURIComponent('regarding.name=watched')}`,
  );
  const wcore = await openWatch(s.url, `${CORE('default')}?watch=true&resourceVersion=${start}`);
  try {
    assert.equal(
      (
        await request(s.url, 'POST', CORE('default'), {
          ...coreEvent('w-core'),
          involvedObject: { ...regarding, name: 'watched' },
        })
      ).status,
      201,
    );
    assert.equal((await request(s.url, 'POST', V1('default'), v1Event('w-v1'))).status, 201);
    assert.equal((await request(s.url, 'DELETE', `${CORE('default')}/w-core`)).status, 200);

    await wv1.waitFor(
      (evs) => evs.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'w-core'),
      'events.plat.io DELETED w-core',
    );
    const added = wv1.events.find((e) => e.type === 'ADDED' && e.object.metadata.name === 'w-core')!;
    assert.equal(added.object.apiVersion, 'events.plat.io/v1');
    assert.equal(added.object.note, 'pulled the image');
    assert.equal(added.object.regarding.name, 'watched');
    assert.ok(!('message' in added.object));
    const v1Added = wv1.events.find((e) => e.type === 'ADDED' && e.object.metadata.name === 'w-v1')!;
    assert.equal(v1Added.object.note, 'assigned to node-1');
    const deleted = wv1.events.find((e) => e.type === 'DELETED')!;
    assert.equal(deleted.object.apiVersion, 'events.plat.io/v1');

    await wcore.waitFor(
      (evs) => evs.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'w-v1'),
      'core ADDED w-v1',
    );
    const coreAdded = wcore.events.find((e) => e.type === 'ADDED' && e.object.metadata.name === 'w-v1')!;
    assert.equal(coreAdded.object.apiVersion, 'v1');
    assert.equal(coreAdded.object.message, 'assigned to node-1');
    assert.equal(coreAdded.object.involvedObject.name, 'web-1');

    await wsel.waitFor((evs) => evs.some((e) => e.type === 'DELETED'), 'selected DELETED');
    assert.deepEqual(
      wsel.events.map((e) => [e.type, e.object.metadata.name]),
      [
        ['ADDED', 'w-core'],
        ['DELETED', 'w-core'],
      ],
    );
    assert.equal(wsel.events[0]!.object.apiVersion, 'events.plat.io/v1');
  } finally {
    wv1.close();
    wsel.close();
    wcore.close();
  }
});

test('watch replay from a resourceVersion through events.plat.io/v1 is converted too', async () => {
  const c = await request(s.url, 'POST', CORE('default'), coreEvent('replayed'));
  assert.equal(c.status, 201, c.text);
  const rv = Number(c.json.metadata.resourceVersion) - 1;
  const w = await openWatch(s.url, `${V1('default')}?watch=true&resourceVersion=${rv}`);
  try {
    await w.waitFor((evs) => evs.some((e) => e.object.metadata?.name === 'replayed'), 'replayed ADDED');
    const e = w.events.find((x) => x.object.metadata?.name === 'replayed')!;
    assert.equal(e.type, 'ADDED');
    assert.equal(e.object.note, 'pulled the image');
  } finally {
    w.close();
  }
});

test('Table view through events.plat.io/v1 prints the same columns as core', async () => {
  assert.equal((await request(s.url, 'POST', V1('default'), v1Event('tabled'))).status, 201);
  const accept = 'application/json;as=Table;g=meta.plat.io;v=v1';
  const t = await request(s.url, 'GET', `${V1('default')}/tabled`, undefined, { accept });
  assert.equal(t.status, 200, t.text);
  const c = await request(s.url, 'GET', `${CORE('default')}/tabled`, undefined, { accept });
  assert.deepEqual(
    t.json.columnDefinitions.map((d: any) => d.name),
    ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject', 'Source', 'Message', 'First Seen', 'Count', 'Name'],
  );
  assert.deepEqual(
    t.json.columnDefinitions.filter((d: any) => d.priority === 0).map((d: any) => d.name),
    ['Last Seen', 'Type', 'Reason', 'Object', 'Message'],
  );
  const cells = t.json.rows[0].cells;
  assert.deepEqual(
    [...cells.slice(1, 4), cells[6], cells[9]],
    ['Normal', 'Scheduled', 'pod/web-1', 'assigned to node-1', 'tabled'],
  );
  assert.deepEqual(c.json.rows[0].cells.slice(1), t.json.rows[0].cells.slice(1));
});

test('a list through events.plat.io/v1 after a core list converts every item (the cached JSON bytes are the stored form only)', async () => {
  const c = await request(s.url, 'POST', CORE('default'), coreEvent('listed-both-ways'));
  assert.equal(c.status, 201, c.text);
  // the core list caches each stored Event's JSON bytes; the converted view must not reuse them
  const core = await request(s.url, 'GET', CORE('default'));
  assert.ok(core.json.items.some((i: any) => i.metadata.name === 'listed-both-ways' && i.apiVersion === 'v1'));
  const v1 = await request(s.url, 'GET', V1('default'));
  assert.equal(v1.status, 200, v1.text);
  const item = v1.json.items.find((i: any) => i.metadata.name === 'listed-both-ways');
  assert.equal(item.apiVersion, 'events.plat.io/v1');
  assert.equal(item.note, 'pulled the image');
  assert.deepEqual(item, (await request(s.url, 'GET', `${V1('default')}/listed-both-ways`)).json);
});

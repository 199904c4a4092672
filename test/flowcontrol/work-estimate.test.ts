import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateSeats, estimateWork } from '../../src/flowcontrol/work-estimate.js';
import { parseRequestInfo } from '../../src/http/request-info.js';

/** The seats of a GET of `url` when the resource holds `stored` objects. */
function seats(url: string, stored: number, method = 'GET'): number {
  const u = new URL(url, 'http://x');
  return estimateSeats(parseRequestInfo(method, u.pathname, u.searchParams), u.searchParams, () => stored);
}

test('a LIST served from the cache costs a seat per 100 stored objects, 1 to 10', () => {
  assert.equal(seats('/api/v1/configmaps', 0), 1);
  assert.equal(seats('/api/v1/configmaps', 100), 1);
  assert.equal(seats('/api/v1/configmaps', 101), 2);
  assert.equal(seats('/api/v1/namespaces/a/configmaps', 250), 3, 'the whole resource is counted, as upstream');
  assert.equal(seats('/api/v1/configmaps', 100_000), 10);
  assert.equal(
    seats('/api/v1/configmaps?limit=50&resourceVersion=0', 1_000),
    10,
    'a limit with resourceVersion=0 is served from the cache',
  );
});

test('a paged LIST from storage costs twice its page; with a selector the count plus the page', () => {
  assert.equal(seats('/api/v1/configmaps?limit=50', 1_000), 1);
  assert.equal(seats('/api/v1/configmaps?limit=500', 1_000), 10);
  assert.equal(seats('/api/v1/configmaps?limit=500', 120), 3, 'a page larger than the resource counts the resource');
  assert.equal(seats('/api/v1/configmaps?limit=50&labelSelector=a%3Db', 300), 4);
  assert.equal(seats('/api/v1/configmaps?limit=50&continue=abc', 1_000), 1);
});

test('one seat: gets, writes, a list by metadata.name, a watch without initial events; a bad limit costs the most', () => {
  assert.equal(seats('/api/v1/namespaces/a/configmaps/x', 100_000), 1);
  assert.equal(seats('/api/v1/namespaces/a/configmaps', 100_000, 'POST'), 1);
  assert.equal(seats('/api/v1/configmaps?fieldSelector=metadata.name%3Dx', 100_000), 1);
  assert.equal(seats('/api/v1/configmaps?watch=true', 100_000), 1);
  assert.equal(seats('/api/v1/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan', 450), 5);
  assert.equal(seats('/api/v1/configmaps?limit=abc', 5), 10);
  assert.equal(seats('/version', 100_000), 1);
});

test('a write to a resource with 10+ watchers pays for its events: a final seat per 10 watchers, 5 ms each', () => {
  const u = new URL('http://x/api/v1/namespaces/a/configmaps');
  const info = parseRequestInfo('POST', u.pathname, u.searchParams);
  const work = (watchers: number, maxSeats = 10) =>
    estimateWork(info, u.searchParams, { objects: () => 0, watchers: () => watchers }, maxSeats);
  assert.deepEqual(
    work(9),
    { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 },
    'fewer than 10 watchers: nothing extra',
  );
  assert.deepEqual(work(25), { initialSeats: 1, finalSeats: 3, additionalLatencyMs: 5 });
  assert.deepEqual(
    work(500),
    { initialSeats: 1, finalSeats: 10, additionalLatencyMs: 25 },
    'capped at 10 seats, the same work held longer',
  );
  assert.deepEqual(
    work(100, 4),
    { initialSeats: 1, finalSeats: 4, additionalLatencyMs: 12.5 },
    "capped at the level's maxSeats",
  );
  const get = new URL('http://x/api/v1/namespaces/a/configmaps/x');
  assert.deepEqual(
    estimateWork(
      parseRequestInfo('GET', get.pathname, get.searchParams),
      get.searchParams,
      { objects: () => 0, watchers: () => 500 },
      10,
    ).finalSeats,
    0,
    'reads fan nothing out',
  );
  const list = new URL('http://x/api/v1/configmaps');
  assert.equal(
    estimateWork(
      parseRequestInfo('GET', list.pathname, list.searchParams),
      list.searchParams,
      { objects: () => 1_000, watchers: () => 0 },
      4,
    ).initialSeats,
    4,
    "a LIST is capped at the level's maxSeats too",
  );
});

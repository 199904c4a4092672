/**
 * Upstream's CEL `urls` library (apiserver/pkg/cel/library/urls.go): url(string), isURL,
 * getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery. Like Go's
 * url.ParseRequestURI, a URL is absolute (`scheme://host/path`) or an absolute path.
 */
import { CelScalar, celFunc, celMethod, listType, mapType, type CelFunc } from '@bufbuild/cel';
import { OPAQUE, opaque, opaqueValue } from './opaque.js';

const { STRING, BOOL } = CelScalar;
const ABSOLUTE = /^([a-zA-Z][a-zA-Z0-9+.-]*):(?:\/\/([^/?]*))?([^?]*)(?:\?(.*))?$/s;
const PATH = /^(\/[^?]*)(?:\?(.*))?$/s;

interface Parts {
  scheme: string;
  host: string;
  path: string;
  query: string;
}

function parse(s: string): Parts | undefined {
  let m = ABSOLUTE.exec(s);
  if (m) {
    const authority = m[2] ?? '';
    const host = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
    if (/\s/.test(s)) return undefined;
    return { scheme: m[1]!, host, path: m[3] ?? '', query: m[4] ?? '' };
  }
  m = PATH.exec(s);
  return m && !/\s/.test(s) ? { scheme: '', host: '', path: m[1]!, query: m[2] ?? '' } : undefined;
}

function partsOf(v: unknown): Parts {
  return parse(opaqueValue(v as never, 'URL'))!;
}

function hostname(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const i = host.lastIndexOf(':');
  return i >= 0 ? host.slice(0, i) : host;
}

function port(host: string): string {
  const end = host.startsWith('[') ? host.indexOf(']') + 1 : 0;
  const i = host.indexOf(':', end);
  return i >= 0 ? host.slice(i + 1) : '';
}

function query(q: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of q.split('&')) {
    if (!pair) continue;
    const [k = '', v = ''] = pair.split('=', 2);
    const dec = (x: string) => decodeURIComponent(x.replace(/\+/g, ' '));
    const key = dec(k);
    out.set(key, [...(out.get(key) ?? []), dec(v)]);
  }
  return out;
}

export const URLS: CelFunc[] = [
  celFunc('url', [STRING], OPAQUE, (s) => {
    if (!parse(s))
      throw new Error(
        `URL parse error during conversion from string: parse ${JSON.stringify(s)}: invalid URI for request`,
      );
    return opaque('URL', s);
  }),
  celFunc('isURL', [STRING], BOOL, (s) => parse(s) !== undefined),
  celMethod('getScheme', OPAQUE, [], STRING, function () {
    return partsOf(this).scheme;
  }),
  celMethod('getHost', OPAQUE, [], STRING, function () {
    return partsOf(this).host;
  }),
  celMethod('getHostname', OPAQUE, [], STRING, function () {
    return hostname(partsOf(this).host);
  }),
  celMethod('getPort', OPAQUE, [], STRING, function () {
    return port(partsOf(this).host);
  }),
  celMethod('getEscapedPath', OPAQUE, [], STRING, function () {
    return partsOf(this).path;
  }),
  celMethod('getQuery', OPAQUE, [], mapType(STRING, listType(STRING)), function () {
    return query(partsOf(this).query);
  }),
];

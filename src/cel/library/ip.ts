/**
 * Upstream's CEL `ip` and `cidr` libraries (apiserver/pkg/cel/library/ip.go, cidr.go): ip(),
 * isIP, ip.isCanonical, family, isUnspecified, isLoopback, isLinkLocalMulticast,
 * isLinkLocalUnicast, isGlobalUnicast; cidr(), isCIDR, containsIP, containsCIDR, ip, masked,
 * prefixLength. Addresses are bigints with their family; IPv4-mapped IPv6 and zones are refused.
 */
import { CelScalar, celFunc, celMethod, type CelFunc, type CelValue } from '@bufbuild/cel';
import { OPAQUE, opaque, opaqueValue } from './opaque.js';

const { STRING, INT, BOOL } = CelScalar;
interface Addr {
  family: 4 | 6;
  n: bigint;
}

function parseV4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => (n << 8n) | BigInt(p), 0n);
}

function parseV6(s: string): bigint | undefined {
  if (s.includes('%') || /^::ffff:\d/i.test(s)) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || (halves.length === 2 && missing < 1)) return undefined;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

export function parseIP(s: string): Addr | undefined {
  const v4 = parseV4(s);
  if (v4 !== undefined) return { family: 4, n: v4 };
  const v6 = s.includes(':') ? parseV6(s) : undefined;
  return v6 === undefined ? undefined : { family: 6, n: v6 };
}

/** RFC 5952 text (Go's netip String): lower case, the longest run of zero groups as `::`. */
export function formatIP(a: Addr): string {
  if (a.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((a.n >> s) & 255n)).join('.');
  const g = Array.from({ length: 8 }, (_, i) => Number((a.n >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = [-1, 0];
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > best[1]! && j - i > 1) best = [i, j - i];
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (best[0]! < 0) return hex.join(':');
  return `${hex.slice(0, best[0]).join(':')}::${hex.slice(best[0]! + best[1]!).join(':')}`;
}

const bits = (a: Addr) => (a.family === 4 ? 32n : 128n);
const ipOf = (v: CelValue): Addr => parseIP(opaqueValue(v, 'IP'))!;

function parseCIDR(s: string): { addr: Addr; prefix: number } | undefined {
  const [ip, len, extra] = s.split('/');
  const addr = ip === undefined ? undefined : parseIP(ip);
  if (!addr || extra !== undefined || len === undefined || !/^(0|[1-9]\d*)$/.test(len) || BigInt(len) > bits(addr))
    return undefined;
  return { addr, prefix: Number(len) };
}

const cidrOf = (v: CelValue) => parseCIDR(opaqueValue(v, 'CIDR'))!;
const mask = (family: 4 | 6, prefix: number): bigint => {
  const total = family === 4 ? 32n : 128n;
  return ((1n << total) - 1n) ^ ((1n << (total - BigInt(prefix))) - 1n);
};
const contains = (c: { addr: Addr; prefix: number }, a: Addr): boolean =>
  a.family === c.addr.family && (a.n & mask(a.family, c.prefix)) === (c.addr.n & mask(a.family, c.prefix));

function ipArg(s: string): Addr {
  const a = parseIP(s);
  if (!a)
    throw new Error(
      `IP Address ${JSON.stringify(s)} parse error during conversion from string: ParseAddr(${JSON.stringify(s)}): unable to parse IP`,
    );
  return a;
}

function cidrArg(s: string): { addr: Addr; prefix: number } {
  const c = parseCIDR(s);
  if (!c)
    throw new Error(
      `network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(s)}): bad prefix`,
    );
  return c;
}

export const IPS: CelFunc[] = [
  celFunc('ip', [STRING], OPAQUE, (s) => opaque('IP', formatIP(ipArg(s)))),
  celFunc('isIP', [STRING], BOOL, (s) => parseIP(s) !== undefined),
  celFunc('ip.isCanonical', [STRING], BOOL, (s) => formatIP(ipArg(s)) === s),
  celMethod('family', OPAQUE, [], INT, function () {
    return BigInt(ipOf(this).family);
  }),
  celMethod('isUnspecified', OPAQUE, [], BOOL, function () {
    return ipOf(this).n === 0n;
  }),
  celMethod('isLoopback', OPAQUE, [], BOOL, function () {
    const a = ipOf(this);
    return a.family === 4 ? a.n >> 24n === 127n : a.n === 1n;
  }),
  celMethod('isLinkLocalMulticast', OPAQUE, [], BOOL, function () {
    const a = ipOf(this);
    return a.family === 4 ? a.n >> 8n === 0xe00000n : a.n >> 112n === 0xff02n;
  }),
  celMethod('isLinkLocalUnicast', OPAQUE, [], BOOL, function () {
    const a = ipOf(this);
    return a.family === 4 ? a.n >> 16n === 0xa9fen : a.n >> 118n === 0x3fan;
  }),
  celMethod('isGlobalUnicast', OPAQUE, [], BOOL, function () {
    const a = ipOf(this);
    if (a.family === 4)
      return (
        a.n !== 0xffffffffn && a.n >> 24n !== 0n && a.n >> 24n !== 127n && a.n >> 28n !== 0xen && a.n >> 16n !== 0xa9fen
      );
    return a.n !== 0n && a.n !== 1n && a.n >> 120n !== 0xffn && a.n >> 118n !== 0x3fan;
  }),
  celFunc('cidr', [STRING], OPAQUE, (s) => {
    const c = cidrArg(s);
    return opaque('CIDR', `${formatIP(c.addr)}/${c.prefix}`);
  }),
  celFunc('isCIDR', [STRING], BOOL, (s) => parseCIDR(s) !== undefined),
  celMethod('containsIP', OPAQUE, [STRING], BOOL, function (s) {
    return contains(cidrOf(this), ipArg(s));
  }),
  celMethod('containsIP', OPAQUE, [OPAQUE], BOOL, function (ip) {
    return contains(cidrOf(this), ipOf(ip));
  }),
  celMethod('containsCIDR', OPAQUE, [STRING], BOOL, function (s) {
    const o = cidrArg(s);
    const c = cidrOf(this);
    return o.prefix >= c.prefix && contains(c, o.addr);
  }),
  celMethod('containsCIDR', OPAQUE, [OPAQUE], BOOL, function (v) {
    const o = cidrOf(v);
    const c = cidrOf(this);
    return o.prefix >= c.prefix && contains(c, o.addr);
  }),
  celMethod('ip', OPAQUE, [], OPAQUE, function () {
    return opaque('IP', formatIP(cidrOf(this).addr));
  }),
  celMethod('masked', OPAQUE, [], OPAQUE, function () {
    const c = cidrOf(this);
    return opaque(
      'CIDR',
      `${formatIP({ family: c.addr.family, n: c.addr.n & mask(c.addr.family, c.prefix) })}/${c.prefix}`,
    );
  }),
  celMethod('prefixLength', OPAQUE, [], INT, function () {
    return BigInt(cidrOf(this).prefix);
  }),
];

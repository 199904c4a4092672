import { applyFeatureGates, defaultGates } from '../api/feature-gates.js';
import { validateShowHidden } from '../metrics/registry.js';
import { METRICS_VERSION } from '../metrics/apiserver-metrics.js';
import { AUTHENTICATION_FLAGS, DEFAULT_AUTHENTICATION_OPTIONS, checkAuthenticationOptions, type AuthenticationOptions } from '../auth/options.js';

/** Server flags: one DEFAULT_OPTIONS, validated once at the boundary with exact messages. */
export interface ServerOptions extends AuthenticationOptions {
  bindAddress: string;
  port: number;
  dataDir: string;
  runtimeConfig: string;
  /** the effective value of every known gate (defaults filled in; see src/api/feature-gates.ts) */
  featureGates: Record<string, boolean>;
  /** startup warnings (GA or deprecated gates set), printed by main */
  warnings: string[];
  shutdownDelayMs: number;
  shards: number;
  maxRequestBodyBytes: number;
  apiDomain: string;
  minRequestTimeoutSec: number;
  watchHistoryWindowMs: number;
  continueTtlMs: number;
  watchBufferBytes: number;
  bookmarkIntervalMs: number;
  serviceClusterIPRange: string;
  serviceNodePortRange: string;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  storageBackend: 'lmdb' | 'etcd3';
  etcdServers: string[];
  etcdPrefix: string;
  etcdCaFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  etcdCompactionIntervalMs: number;
  /** `--show-hidden-metrics-for-version`: the previous minor release re-enables its hidden metrics */
  showHiddenMetricsForVersion?: string;
  /** auditing is on when both the policy file and the log path are given */
  auditPolicyFile: string;
  auditLogPath: string;
  auditLogMaxSizeMB: number;
  auditLogMaxBackups: number;
  auditLogMaxAgeDays: number;
  /** `--encryption-provider-config`: EncryptionConfiguration file ('' = no encryption at rest) */
  encryptionProviderConfig: string;
}

export const DEFAULT_OPTIONS: ServerOptions = {
  bindAddress: '127.0.0.1',
  port: 8080,
  dataDir: './data',
  runtimeConfig: '',
  featureGates: defaultGates(),
  warnings: [],
  shutdownDelayMs: 0,
  shards: 2,
  maxRequestBodyBytes: 3 * 1024 * 1024,
  apiDomain: 'plat.io',
  minRequestTimeoutSec: 1800,
  watchHistoryWindowMs: 5 * 60_000,
  continueTtlMs: 5 * 60_000,
  watchBufferBytes: 10 * 1024 * 1024,
  bookmarkIntervalMs: 60_000,
  serviceClusterIPRange: '10.0.0.0/24',
  serviceNodePortRange: '30000-32767',
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  ...DEFAULT_AUTHENTICATION_OPTIONS,
  storageBackend: 'lmdb',
  etcdServers: ['http://127.0.0.1:2379'],
  etcdPrefix: '/registry',
  etcdCompactionIntervalMs: 5 * 60_000,
  auditPolicyFile: '',
  auditLogPath: '',
  auditLogMaxSizeMB: 0,
  auditLogMaxBackups: 0,
  auditLogMaxAgeDays: 0,
  encryptionProviderConfig: '',
};

/** Parses a Go-style duration ("30s", "1m", "500ms", "1h2m") into milliseconds. */
export function parseDuration(s: string): number | undefined {
  if (/^[0-9]+$/.test(s)) return Number(s) * 1000;
  const re = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/gy;
  let total = 0, m: RegExpExecArray | null, end = 0;
  while ((m = re.exec(s))) {
    total += Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const)[m[2] as 'ms'];
    end = re.lastIndex;
  }
  return end === s.length && end > 0 ? total : undefined;
}

type Setter = (o: ServerOptions, v: string) => void;

function int(flag: string, min: number, set: (o: ServerOptions, n: number) => void): Setter {
  return (o, v) => {
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || n < min) throw new Error(`--${flag} must be an integer >= ${min}, got "${v}"`);
    set(o, n);
  };
}

function duration(flag: string, set: (o: ServerOptions, ms: number) => void): Setter {
  return (o, v) => {
    const ms = parseDuration(v);
    if (ms === undefined) throw new Error(`--${flag} must be a duration such as 30s or 5m, got "${v}"`);
    set(o, ms);
  };
}

const FLAGS: Record<string, Setter> = {
  ...AUTHENTICATION_FLAGS,
  'bind-address': (o, v) => { o.bindAddress = v; },
  'port': int('port', 0, (o, n) => { o.port = n; }),
  'data-dir': (o, v) => { o.dataDir = v; },
  'runtime-config': (o, v) => { o.runtimeConfig = v; },
  'feature-gates': (o, v) => applyFeatureGates(v, { gates: o.featureGates, warnings: o.warnings }),
  'shutdown-delay-duration': duration('shutdown-delay-duration', (o, ms) => { o.shutdownDelayMs = ms; }),
  'shards': int('shards', 1, (o, n) => { o.shards = n; }),
  'max-request-body-bytes': int('max-request-body-bytes', 1, (o, n) => { o.maxRequestBodyBytes = n; }),
  'api-domain': (o, v) => { o.apiDomain = v; },
  'min-request-timeout': int('min-request-timeout', 1, (o, n) => { o.minRequestTimeoutSec = n; }),
  'watch-history-window': duration('watch-history-window', (o, ms) => { o.watchHistoryWindowMs = ms; }),
  'continue-token-ttl': duration('continue-token-ttl', (o, ms) => { o.continueTtlMs = ms; }),
  'watch-buffer-bytes': int('watch-buffer-bytes', 1024, (o, n) => { o.watchBufferBytes = n; }),
  'bookmark-interval': duration('bookmark-interval', (o, ms) => { o.bookmarkIntervalMs = ms; }),
  'max-requests-inflight': int('max-requests-inflight', 0, (o, n) => { o.maxRequestsInflight = n; }),
  'max-mutating-requests-inflight': int('max-mutating-requests-inflight', 0, (o, n) => { o.maxMutatingRequestsInflight = n; }),
  'service-cluster-ip-range': (o, v) => {
    if (!/^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/.test(v)) throw new Error(`--service-cluster-ip-range must be an IPv4 CIDR such as 10.0.0.0/24, got "${v}"`);
    o.serviceClusterIPRange = v;
  },
  'service-node-port-range': (o, v) => {
    const m = /^(\d+)-(\d+)$/.exec(v);
    if (!m || Number(m[1]) > Number(m[2]) || Number(m[2]) > 65535) throw new Error(`--service-node-port-range must be a range such as 30000-32767, got "${v}"`);
    o.serviceNodePortRange = v;
  },
  'storage-backend': (o, v) => {
    if (v !== 'lmdb' && v !== 'etcd3') throw new Error(`--storage-backend must be lmdb or etcd3, got "${v}"`);
    o.storageBackend = v;
  },
  'etcd-servers': (o, v) => {
    const urls = v.split(',');
    if (!urls.every((u) => /^https?:\/\/[^/,\s]+\/?$/.test(u))) throw new Error(`--etcd-servers must be a comma-separated list of http:// or https:// URLs, got "${v}"`);
    o.etcdServers = urls;
  },
  'etcd-prefix': (o, v) => {
    if (!v.startsWith('/')) throw new Error(`--etcd-prefix must start with /, got "${v}"`);
    o.etcdPrefix = v.replace(/\/+$/, '');
  },
  'etcd-cafile': (o, v) => { o.etcdCaFile = v; },
  'etcd-certfile': (o, v) => { o.etcdCertFile = v; },
  'etcd-keyfile': (o, v) => { o.etcdKeyFile = v; },
  'show-hidden-metrics-for-version': (o, v) => {
    if (v !== '') validateShowHidden(v, METRICS_VERSION);
    o.showHiddenMetricsForVersion = v || undefined;
  },
  'audit-policy-file': (o, v) => { o.auditPolicyFile = v; },
  'encryption-provider-config': (o, v) => { o.encryptionProviderConfig = v; },
  'audit-log-path': (o, v) => { o.auditLogPath = v; },
  'audit-log-maxsize': int('audit-log-maxsize', 0, (o, n) => { o.auditLogMaxSizeMB = n; }),
  'audit-log-maxbackup': int('audit-log-maxbackup', 0, (o, n) => { o.auditLogMaxBackups = n; }),
  'audit-log-maxage': int('audit-log-maxage', 0, (o, n) => { o.auditLogMaxAgeDays = n; }),
  'audit-log-format': (o, v) => {
    if (v !== 'json') throw new Error(`--audit-log-format must be json, got "${v}"`);
  },
  'etcd-compaction-interval': duration('etcd-compaction-interval', (o, ms) => { o.etcdCompactionIntervalMs = ms; }),
};

/** Rules between flags, checked once all are parsed. */
function checkCombined(o: ServerOptions): void {
  checkAuthenticationOptions(o);
  if (!o.etcdCertFile !== !o.etcdKeyFile) throw new Error('--etcd-certfile and --etcd-keyfile must be given together');
  const tls = o.etcdCaFile || o.etcdCertFile;
  if (tls && !o.etcdServers.every((u) => u.startsWith('https://'))) throw new Error('--etcd-servers must use https:// when --etcd-cafile or --etcd-certfile is given');
}

export function parseArgs(argv: string[]): ServerOptions {
  const o: ServerOptions = { ...DEFAULT_OPTIONS, featureGates: defaultGates(), warnings: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument "${a}"`);
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    const set = FLAGS[name];
    if (!set) throw new Error(`unknown flag: --${name}`);
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    set(o, value);
  }
  checkCombined(o);
  return o;
}

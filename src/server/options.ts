import { applyFeatureGates, defaultGates } from '../api/feature-gates.js';
import { validateShowHidden } from '../metrics/registry.js';
import { METRICS_VERSION } from '../metrics/apiserver-metrics.js';
import { checkAuthorizationOptions } from '../auth/authz/options.js';
import { parseControllers } from '../controllers/selection.js';
import {
  AGGREGATOR_FLAGS,
  DEFAULT_AGGREGATOR_OPTIONS,
  checkAggregatorOptions,
  type AggregatorOptions,
} from '../aggregator/options.js';
import {
  KUBELET_FLAGS,
  DEFAULT_KUBELET_OPTIONS,
  checkKubeletOptions,
  type KubeletOptions,
} from '../kubelet/options.js';
import {
  ADMISSION_FLAGS,
  DEFAULT_ADMISSION_OPTIONS,
  checkAdmissionOptions,
  enabledAdmissionPlugins,
  type AdmissionOptions,
} from '../admission/options.js';
import {
  AUTHENTICATION_FLAGS,
  BOOLEAN_FLAGS,
  DEFAULT_AUTHENTICATION_OPTIONS,
  checkAuthenticationOptions,
  type AuthenticationOptions,
} from '../auth/options.js';
import type { CoreOptions } from '../http/options.js';
export type { CoreOptions };

/** Server flags: one DEFAULT_OPTIONS, validated once at the boundary with exact messages. */
export interface ServerOptions
  extends CoreOptions,
    AuthenticationOptions,
    AdmissionOptions,
    AggregatorOptions,
    KubeletOptions {}

export const DEFAULT_OPTIONS: ServerOptions = {
  bindAddress: '127.0.0.1',
  port: -1,
  insecureBindAddress: '127.0.0.1',
  dataDir: './data',
  runtimeConfig: '',
  featureGates: defaultGates(),
  warnings: [],
  shutdownDelayMs: 0,
  shards: 2,
  maxRequestBodyBytes: 3 * 1024 * 1024,
  apiDomain: 'plat.io',
  minRequestTimeoutSec: 1800,
  requestTimeoutMs: 60_000,
  watchHistoryWindowMs: 5 * 60_000,
  continueTtlMs: 5 * 60_000,
  watchBufferBytes: 10 * 1024 * 1024,
  bookmarkIntervalMs: 60_000,
  serviceClusterIPRange: '10.0.0.0/24',
  serviceNodePortRange: '30000-32767',
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
  enablePriorityAndFairness: true,
  ...DEFAULT_AUTHENTICATION_OPTIONS,
  ...DEFAULT_ADMISSION_OPTIONS,
  ...DEFAULT_AGGREGATOR_OPTIONS,
  ...DEFAULT_KUBELET_OPTIONS,
  admissionPlugins: enabledAdmissionPlugins(DEFAULT_ADMISSION_OPTIONS),
  storageBackend: 'lmdb',
  etcdServers: ['http://127.0.0.1:2379'],
  etcdPrefix: '/registry',
  etcdCompactionIntervalMs: 5 * 60_000,
  leaderElectLeaseDurationMs: 15_000,
  leaderElectRenewDeadlineMs: 10_000,
  leaderElectRetryPeriodMs: 2_000,
  clusterSigningCertFile: '',
  clusterSigningKeyFile: '',
  clusterSigningDurationMs: 8760 * 3_600_000,
  eventTtlMs: 3_600_000,
  nodeMonitorGracePeriodMs: 40_000,
  nodeStartupGracePeriodMs: 60_000,
  controllers: ['*'],
  auditPolicyFile: '',
  auditLogPath: '',
  auditLogMaxSizeMB: 0,
  auditLogMaxBackups: 0,
  auditLogMaxAgeDays: 0,
  encryptionProviderConfig: '',
  reshard: false,
  verbosity: 0,
  loggingFormat: 'text',
  help: false,
  version: '',
};

export { parseDuration } from '../api/duration.js';
import { parseDuration } from '../api/duration.js';

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
  ...ADMISSION_FLAGS,
  ...AGGREGATOR_FLAGS,
  ...KUBELET_FLAGS,
  'bind-address': (o, v) => {
    o.bindAddress = v;
  },
  'port': (o, v) => {
    if (v === 'off') {
      o.port = -1;
      return;
    }
    if (!/^[0-9]+$/.test(v) || Number(v) > 65535)
      throw new Error(`--port must be an integer between 0 and 65535 or off, got "${v}"`);
    o.port = Number(v);
  },
  'insecure-bind-address': (o, v) => {
    o.insecureBindAddress = v;
  },
  'data-dir': (o, v) => {
    o.dataDir = v;
  },
  'runtime-config': (o, v) => {
    o.runtimeConfig = v;
  },
  'feature-gates': (o, v) => applyFeatureGates(v, { gates: o.featureGates, warnings: o.warnings }),
  'shutdown-delay-duration': duration('shutdown-delay-duration', (o, ms) => {
    o.shutdownDelayMs = ms;
  }),
  'shards': int('shards', 1, (o, n) => {
    o.shards = n;
  }),
  'max-request-body-bytes': int('max-request-body-bytes', 1, (o, n) => {
    o.maxRequestBodyBytes = n;
  }),
  'api-domain': (o, v) => {
    o.apiDomain = v;
  },
  'min-request-timeout': int('min-request-timeout', 1, (o, n) => {
    o.minRequestTimeoutSec = n;
  }),
  'request-timeout': duration('request-timeout', (o, ms) => {
    o.requestTimeoutMs = ms;
  }),
  'watch-history-window': duration('watch-history-window', (o, ms) => {
    o.watchHistoryWindowMs = ms;
  }),
  'continue-token-ttl': duration('continue-token-ttl', (o, ms) => {
    o.continueTtlMs = ms;
  }),
  'watch-buffer-bytes': int('watch-buffer-bytes', 1024, (o, n) => {
    o.watchBufferBytes = n;
  }),
  'bookmark-interval': duration('bookmark-interval', (o, ms) => {
    o.bookmarkIntervalMs = ms;
  }),
  'max-requests-inflight': int('max-requests-inflight', 0, (o, n) => {
    o.maxRequestsInflight = n;
  }),
  'enable-priority-and-fairness': (o, v) => {
    if (v !== 'true' && v !== 'false')
      throw new Error(`--enable-priority-and-fairness must be true or false, got "${v}"`);
    o.enablePriorityAndFairness = v === 'true';
  },
  'max-mutating-requests-inflight': int('max-mutating-requests-inflight', 0, (o, n) => {
    o.maxMutatingRequestsInflight = n;
  }),
  'service-cluster-ip-range': (o, v) => {
    if (!/^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/.test(v))
      throw new Error(`--service-cluster-ip-range must be an IPv4 CIDR such as 10.0.0.0/24, got "${v}"`);
    o.serviceClusterIPRange = v;
  },
  'service-node-port-range': (o, v) => {
    const m = /^(\d+)-(\d+)$/.exec(v);
    if (!m || Number(m[1]) > Number(m[2]) || Number(m[2]) > 65535)
      throw new Error(`--service-node-port-range must be a range such as 30000-32767, got "${v}"`);
    o.serviceNodePortRange = v;
  },
  'storage-backend': (o, v) => {
    if (v !== 'lmdb' && v !== 'etcd3') throw new Error(`--storage-backend must be lmdb or etcd3, got "${v}"`);
    o.storageBackend = v;
  },
  'etcd-servers': (o, v) => {
    const urls = v.split(',');
    if (!urls.every((u) => /^https?:\/\/[^/,\s]+\/?$/.test(u)))
      throw new Error(`--etcd-servers must be a comma-separated list of http:// or https:// URLs, got "${v}"`);
    o.etcdServers = urls;
  },
  'etcd-prefix': (o, v) => {
    if (!v.startsWith('/')) throw new Error(`--etcd-prefix must start with /, got "${v}"`);
    o.etcdPrefix = v.replace(/\/+$/, '');
  },
  'etcd-cafile': (o, v) => {
    o.etcdCaFile = v;
  },
  'etcd-certfile': (o, v) => {
    o.etcdCertFile = v;
  },
  'etcd-keyfile': (o, v) => {
    o.etcdKeyFile = v;
  },
  'node-monitor-grace-period': duration('node-monitor-grace-period', (o, ms) => {
    o.nodeMonitorGracePeriodMs = ms;
  }),
  'node-startup-grace-period': duration('node-startup-grace-period', (o, ms) => {
    o.nodeStartupGracePeriodMs = ms;
  }),
  'event-ttl': duration('event-ttl', (o, ms) => {
    o.eventTtlMs = ms;
  }),
  'controllers': (o, v) => {
    o.controllers = parseControllers(v);
  },
  'show-hidden-metrics-for-version': (o, v) => {
    if (v !== '') validateShowHidden(v, METRICS_VERSION);
    o.showHiddenMetricsForVersion = v || undefined;
  },
  'audit-policy-file': (o, v) => {
    o.auditPolicyFile = v;
  },
  'encryption-provider-config': (o, v) => {
    o.encryptionProviderConfig = v;
  },
  'audit-log-path': (o, v) => {
    o.auditLogPath = v;
  },
  'audit-log-maxsize': int('audit-log-maxsize', 0, (o, n) => {
    o.auditLogMaxSizeMB = n;
  }),
  'audit-log-maxbackup': int('audit-log-maxbackup', 0, (o, n) => {
    o.auditLogMaxBackups = n;
  }),
  'audit-log-maxage': int('audit-log-maxage', 0, (o, n) => {
    o.auditLogMaxAgeDays = n;
  }),
  'audit-log-format': (_o, v) => {
    if (v !== 'json') throw new Error(`--audit-log-format must be json, got "${v}"`);
  },
  'etcd-compaction-interval': duration('etcd-compaction-interval', (o, ms) => {
    o.etcdCompactionIntervalMs = ms;
  }),
  'leader-elect': (o, v) => {
    if (v !== 'true' && v !== 'false') throw new Error(`--leader-elect must be true or false, got "${v}"`);
    o.leaderElect = v === 'true';
  },
  'leader-elect-lease-duration': duration('leader-elect-lease-duration', (o, ms) => {
    o.leaderElectLeaseDurationMs = ms;
  }),
  'leader-elect-renew-deadline': duration('leader-elect-renew-deadline', (o, ms) => {
    o.leaderElectRenewDeadlineMs = ms;
  }),
  'leader-elect-retry-period': duration('leader-elect-retry-period', (o, ms) => {
    o.leaderElectRetryPeriodMs = ms;
  }),
  'v': (o, v) => {
    if (!/^[0-9]+$/.test(v) || Number(v) > 10) throw new Error(`--v must be an integer between 0 and 10, got "${v}"`);
    o.verbosity = Number(v);
  },
  'logging-format': (o, v) => {
    if (v !== 'text' && v !== 'json') throw new Error(`--logging-format must be text or json, got "${v}"`);
    o.loggingFormat = v;
  },
  'help': (o, v) => {
    o.help = v !== 'false';
  },
  'version': (o, v) => {
    if (v !== 'true' && v !== 'false' && v !== 'raw')
      throw new Error(`--version must be true, false or raw, got "${v}"`);
    o.version = v === 'raw' ? 'raw' : v === 'true' ? 'short' : '';
  },
  'reshard': (o, v) => {
    if (v !== 'true' && v !== 'false') throw new Error(`--reshard must be true or false, got "${v}"`);
    o.reshard = v === 'true';
  },
  'cluster-signing-cert-file': (o, v) => {
    o.clusterSigningCertFile = v;
  },
  'cluster-signing-key-file': (o, v) => {
    o.clusterSigningKeyFile = v;
  },
  'cluster-signing-duration': (o, v) => {
    const ms = parseDuration(v);
    if (ms === undefined || ms <= 0)
      throw new Error(`--cluster-signing-duration must be a positive duration such as 8760h, got "${v}"`);
    o.clusterSigningDurationMs = ms;
  },
};

/** Rules between flags, checked once all are parsed. */
function checkCombined(o: ServerOptions): void {
  checkAuthenticationOptions(o);
  if (o.port < 0 && o.securePort < 0) throw new Error('--port and --secure-port are both off: nothing would be served');
  checkAuthorizationOptions(o);
  checkAdmissionOptions(o);
  checkAggregatorOptions(o);
  checkKubeletOptions(o);
  o.admissionPlugins = enabledAdmissionPlugins(o);
  if (!o.etcdCertFile !== !o.etcdKeyFile) throw new Error('--etcd-certfile and --etcd-keyfile must be given together');
  if (o.leaderElectLeaseDurationMs <= o.leaderElectRenewDeadlineMs)
    throw new Error('leaseDuration must be greater than renewDeadline');
  if (o.leaderElectRenewDeadlineMs <= o.leaderElectRetryPeriodMs)
    throw new Error('renewDeadline must be greater than retryPeriod');
  if (!o.clusterSigningCertFile !== !o.clusterSigningKeyFile)
    throw new Error('--cluster-signing-cert-file and --cluster-signing-key-file must be given together');
  const tls = o.etcdCaFile || o.etcdCertFile;
  if (tls && !o.etcdServers.every((u) => u.startsWith('https://')))
    throw new Error('--etcd-servers must use https:// when --etcd-cafile or --etcd-certfile is given');
}

/**
 * Hidden flags: knobs for benchmarks and fixtures for tests, parsed like the others but not
 * documented (not in FLAG_NAMES, --help or docs/flags.md); a production server never sets them.
 */
const HIDDEN_FLAGS: Record<string, Setter> = {
  'actor-pipeline-depth': int('actor-pipeline-depth', 1, (o, n) => {
    o.actorPipelineDepth = n;
  }),
  'actor-heavy-per-batch': int('actor-heavy-per-batch', 1, (o, n) => {
    o.actorHeavyPerBatch = n;
  }),
  'tls-front-inline': (o, v) => {
    o.tlsFrontInline = v === 'true';
  },
  'proxy-allow-loopback': (o, v) => {
    o.proxyAllowLoopback = v === 'true';
  },
  'test-actor-faults': (o, v) => {
    o.testFaults = { ...o.testFaults, dir: v };
  },
  'test-fail-commit-match': (o, v) => {
    o.testFaults = { ...o.testFaults, failCommitMatch: v };
  },
};

/** Server booleans that, as pflag's, may be given alone (`--reshard` = `--reshard=true`). */
const SERVER_BOOLEAN_FLAGS: ReadonlySet<string> = new Set([
  'leader-elect',
  'reshard',
  'help',
  'version',
  'tls-front-inline',
  'proxy-allow-loopback',
]);

/** Every flag name parseArgs knows (docs: src/server/flag-docs.ts). */
export const FLAG_NAMES: readonly string[] = Object.keys(FLAGS);

/** The one-dash spellings upstream has: -h, -v 3, -v=3. */
function longForm(a: string): string {
  if (a === '-h') return '--help';
  if (a === '-v' || a.startsWith('-v=')) return `-${a}`;
  return a;
}

export function parseArgs(argv: string[]): ServerOptions {
  const o: ServerOptions = { ...DEFAULT_OPTIONS, featureGates: defaultGates(), warnings: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = longForm(argv[i]!);
    if (!a.startsWith('--')) throw new Error(`unexpected argument "${a}"`);
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    const set = FLAGS[name] ?? HIDDEN_FLAGS[name];
    if (!set) throw new Error(`unknown flag: --${name}`);
    const bare =
      eq < 0 &&
      (BOOLEAN_FLAGS.has(name) || SERVER_BOOLEAN_FLAGS.has(name)) &&
      argv[i + 1] !== 'true' &&
      argv[i + 1] !== 'false';
    const value = eq > 0 ? a.slice(eq + 1) : bare ? 'true' : argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    set(o, value);
  }
  if (o.help || o.version) return o;
  checkCombined(o);
  return o;
}

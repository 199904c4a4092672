/**
 * The server-wide settings every layer of the front may read (through `Services.options`); the
 * flags of the authentication, admission, aggregation and kubelet layers extend it into
 * `ServerOptions` (src/server/options.ts), which only the wiring sees whole.
 */
import type { TestFaults } from '../actors/protocol.js';

export interface CoreOptions {
  /** the admission plugins on (src/admission/options.ts), computed once the flags are parsed */
  admissionPlugins: Set<string>;
  /** address of the secure port (`--bind-address`) */
  bindAddress: string;
  /** the plain port without authentication; -1 = off (the default), 0 = any free port */
  port: number;
  /** address of the plain port (`--insecure-bind-address`, loopback by default) */
  insecureBindAddress: string;
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
  /** upper bound on a non-watch request (504 past it); the `timeout` query parameter may lower it */
  requestTimeoutMs: number;
  watchHistoryWindowMs: number;
  continueTtlMs: number;
  watchBufferBytes: number;
  bookmarkIntervalMs: number;
  serviceClusterIPRange: string;
  serviceNodePortRange: string;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  enablePriorityAndFairness: boolean;
  storageBackend: 'lmdb' | 'etcd3';
  etcdServers: string[];
  etcdPrefix: string;
  etcdCaFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  etcdCompactionIntervalMs: number;
  /**
   * run the controllers only while holding the controller Lease (several servers on one
   * etcd); undefined: on with --storage-backend etcd3, off with lmdb
   */
  leaderElect?: boolean;
  leaderElectLeaseDurationMs: number;
  leaderElectRenewDeadlineMs: number;
  leaderElectRetryPeriodMs: number;
  /** CA pair of the built-in CSR signers; '' = the cluster CA under the cert dir */
  clusterSigningCertFile: string;
  clusterSigningKeyFile: string;
  /** longest lifetime of a certificate the built-in signers issue */
  clusterSigningDurationMs: number;
  /** how long an Event lives after its last write (upstream --event-ttl) */
  eventTtlMs: number;
  /** a Node whose heartbeat (lease or status) is older than this goes Unknown (upstream controller flag) */
  nodeMonitorGracePeriodMs: number;
  /** the same for a Node that never posted a status */
  nodeStartupGracePeriodMs: number;
  /** `--controllers` (src/controllers/selection.ts) */
  controllers: string[];
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
  /** `--reshard`: redistribute an LMDB data directory's keys to `--shards` before starting (src/server/reshard.ts) */
  reshard: boolean;
  /** `-v`/`--v`: log verbosity 0-10 (src/server/log.ts) */
  verbosity: number;
  /** `--logging-format` */
  loggingFormat: 'text' | 'json';
  /** `--help`/`-h` and `--version` (`raw`: the /version JSON): main prints and exits */
  help: boolean;
  version: '' | 'short' | 'raw';
  /** hidden `--actor-pipeline-depth` (benchmarking): batches in flight per shard; unset = 2 (LMDB and etcd) */
  actorPipelineDepth?: number;
  /** hidden `--actor-heavy-per-batch` (benchmarking): heavy ops (large LISTs, DELETE collection) per actor batch; unset = 4 */
  actorHeavyPerBatch?: number;
  /** hidden `--tls-front-inline` (benchmarking): the TLS front on the main thread, not its own */
  tlsFrontInline?: boolean;
  /** hidden `--proxy-allow-loopback` (tests): node proxy/connect may reach loopback addresses, as upstream never does */
  proxyAllowLoopback?: boolean;
  /** hidden `--test-actor-faults` / `--test-fail-commit-match`: test-only fault injection in the shard actors */
  testFaults?: TestFaults;
}

/**
 * The flag rows of the control half of --help: authorization, API enablement, admission,
 * metrics, logs, controllers, storage and the global flags (the rest in flag-rows-serving.ts).
 */
import { GIT_VERSION } from '../api/release.js';
import type { FlagSet, Row } from './flag-sets.js';

export const CONTROL_ROWS: Record<
  Extract<
    FlagSet,
    'Authorization' | 'API enablement' | 'Admission' | 'Metrics' | 'Logs' | 'Controllers' | 'Storage' | 'Global'
  >,
  Row[]
> = {
  'Authorization': [
    [
      'authorization-mode',
      'strings',
      'Node,RBAC',
      'ordered authorizers on the secure port: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node',
    ],
    [
      'authorization-config',
      'string',
      '',
      'AuthorizationConfiguration file (excludes the other authorization flags); reloaded on change',
    ],
    ['authorization-policy-file', 'string', '', 'ABAC policy, one JSON Policy a line (with mode ABAC)'],
    [
      'authorization-webhook-config-file',
      'string',
      '',
      'kubeconfig of a SubjectAccessReview webhook (with mode Webhook)',
    ],
    [
      'authorization-webhook-version',
      'string',
      'v1beta1',
      'SubjectAccessReview version sent to the webhook (v1 or v1beta1)',
    ],
    [
      'authorization-webhook-cache-authorized-ttl',
      'duration',
      '5m0s',
      'how long allowed answers of the webhook are cached',
    ],
    [
      'authorization-webhook-cache-unauthorized-ttl',
      'duration',
      '30s',
      'how long denied answers of the webhook are cached',
    ],
  ],
  'API enablement': [
    ['proxy-client-cert-file', 'string', '', 'client certificate presented to extension API servers (aggregation)'],
    ['proxy-client-key-file', 'string', '', 'private key of --proxy-client-cert-file'],
    [
      'enable-aggregator-routing',
      'bool',
      'false',
      "accepted for compatibility: requests always go to the endpoints of an APIService's Service",
    ],
  ],
  'Admission': [
    [
      'enable-admission-plugins',
      'strings',
      '',
      'admission plugins to turn on besides the default ones (upstream names)',
    ],
    ['disable-admission-plugins', 'strings', '', 'default admission plugins to turn off'],
  ],
  'Metrics': [
    [
      'show-hidden-metrics-for-version',
      'string',
      '',
      'the previous minor release (e.g. 1.31) shows the metrics it hid',
    ],
  ],
  'Logs': [
    [
      'v',
      'int',
      '0',
      'log verbosity 0-10 (also -v): 0 start summary, warnings and shutdown; 3 adds one line per request',
    ],
    ['logging-format', 'string', 'text', 'log format: text or json (one JSON object a line)'],
  ],
  'Controllers': [
    [
      'controllers',
      'strings',
      '*',
      'controllers to run: * for the default set, name to add, -name to remove (upstream names)',
    ],
    [
      'leader-elect',
      'bool',
      'true with etcd3',
      'run the controllers only while holding the controller Lease (several servers on one etcd)',
    ],
    [
      'leader-elect-lease-duration',
      'duration',
      '15s',
      'how long a non-leader waits before taking over an unrenewed Lease',
    ],
    ['leader-elect-renew-deadline', 'duration', '10s', 'how long the leader retries renewing before giving up'],
    ['leader-elect-retry-period', 'duration', '2s', 'how often leader election is tried'],
    ['node-monitor-grace-period', 'duration', '40s', 'a Node whose heartbeat is older than this goes Unknown'],
    ['node-startup-grace-period', 'duration', '1m', 'the same for a Node that never posted a status'],
    [
      'cluster-signing-cert-file',
      'string',
      '',
      'CA certificate of the built-in CSR signers (default: the generated cluster CA)',
    ],
    ['cluster-signing-key-file', 'string', '', 'private key of --cluster-signing-cert-file'],
    ['cluster-signing-duration', 'duration', '8760h', 'longest lifetime of a certificate the built-in signers issue'],
  ],
  'Storage': [
    [
      'data-dir',
      'string',
      './data',
      'directory of the LMDB shards, generated keys and certificates, admin.kubeconfig and platform.json',
    ],
    [
      'shards',
      'int',
      '2',
      'number of storage shards (worker threads, one LMDB environment each); fixed per data directory',
    ],
    [
      'reshard',
      'bool',
      'false',
      "before starting, move an LMDB data directory's keys to --shards (verified key by key; docs/operations.md)",
    ],
    ['watch-history-window', 'duration', '5m', 'how far back a watch may start (older resourceVersions: 410 Gone)'],
    ['continue-token-ttl', 'duration', '5m', 'how long a list continue token stays valid'],
    ['watch-buffer-bytes', 'int', '10485760', 'bytes buffered for a slow watcher before it is closed'],
    ['bookmark-interval', 'duration', '1m', 'how often watchers that asked for bookmarks get one'],
  ],
  'Global': [
    ['help', '', '', 'print this help and exit'],
    [
      'version',
      '',
      '',
      `print the version (${GIT_VERSION}, as /version) and exit; --version=raw prints /version's JSON`,
    ],
  ],
};

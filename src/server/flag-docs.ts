/**
 * The documentation of every flag: its flag set (grouped as upstream kube-apiserver's --help),
 * type, default and one line. `--help` and docs/flags.md (scripts/gen-flags.ts) are both
 * rendered from this table; test/server/flags-doc.test.ts fails when a parsed flag has no entry
 * here, an entry names no parsed flag, or docs/flags.md differs from the rendering.
 */
import { GIT_VERSION } from '../api/release.js';

export const FLAG_SETS = [
  'Generic',
  'Secure serving',
  'Node agents',
  'Etcd',
  'Auditing',
  'Features',
  'Authentication',
  'Authorization',
  'API enablement',
  'Admission',
  'Metrics',
  'Logs',
  'Controllers',
  'Storage',
  'Global',
] as const;
export type FlagSet = (typeof FLAG_SETS)[number];

export interface FlagDoc {
  name: string;
  set: FlagSet;
  /** pflag-style type word: string, int, bool, duration, strings, mapStringBool, ... ('' for a switch) */
  type: string;
  /** the default as written on the command line ('' when none) */
  default: string;
  usage: string;
}

type Row = [name: string, type: string, def: string, usage: string];

const SETS: Record<FlagSet, Row[]> = {
  'Generic': [
    [
      'api-domain',
      'string',
      'plat.io',
      'API domain of group names and labels; k8s.io serves upstream names (kubernetes.io, kube-system) for unmodified clients',
    ],
    [
      'runtime-config',
      'string',
      '',
      'enable or disable API groups/versions: group/version=true|false, comma-separated (api/all, api/beta, api/alpha)',
    ],
    ['max-request-body-bytes', 'int', '3145728', 'largest request body accepted; larger bodies are refused with 413'],
    [
      'min-request-timeout',
      'int',
      '1800',
      'minimum seconds a watch lasts; each watch gets a random timeout between this and twice this',
    ],
    [
      'request-timeout',
      'duration',
      '60s',
      'upper bound on a non-watch request (504 past it); the timeout query parameter may lower it',
    ],
    [
      'max-requests-inflight',
      'int',
      '400',
      'in-flight read limit (with priority and fairness: part of the total concurrency); 0 = no limit',
    ],
    [
      'max-mutating-requests-inflight',
      'int',
      '200',
      'in-flight write limit (with priority and fairness: part of the total concurrency); 0 = no limit',
    ],
    [
      'enable-priority-and-fairness',
      'bool',
      'true',
      'API Priority and Fairness (FlowSchemas, PriorityLevelConfigurations) instead of the in-flight limits',
    ],
    [
      'shutdown-delay-duration',
      'duration',
      '0s',
      'on SIGTERM, keep serving this long with /readyz failing before draining',
    ],
    ['service-cluster-ip-range', 'string', '10.0.0.0/24', 'IPv4 CIDR from which Service cluster IPs are allocated'],
    ['service-node-port-range', 'string', '30000-32767', 'port range reserved for Services of type NodePort'],
    ['event-ttl', 'duration', '1h', 'how long an Event is kept after its last write'],
  ],
  'Secure serving': [
    [
      'secure-port',
      'int',
      '6443',
      'HTTPS port serving with authentication and authorization; 0 = any free port, off = disabled',
    ],
    ['bind-address', 'string', '127.0.0.1', 'address of the secure port (0.0.0.0 for every interface)'],
    ['cert-dir', 'string', '<data-dir>/pki', 'where the generated CA, serving, admin and service account keys live'],
    ['tls-cert-file', 'string', '', 'serving certificate (PEM); default: a certificate generated under --cert-dir'],
    ['tls-private-key-file', 'string', '', 'private key of --tls-cert-file'],
    [
      'read-header-timeout',
      'duration',
      '32s',
      'a TLS handshake or a begun request head not complete by then closes the connection',
    ],
    [
      'port',
      'int',
      'off',
      'plain HTTP port WITHOUT authentication (every request is system:unsecured in system:masters); 0 = any free port',
    ],
    [
      'insecure-bind-address',
      'string',
      '127.0.0.1',
      'address of the plain --port (a warning is printed unless loopback)',
    ],
  ],
  'Node agents': [
    [
      'kubelet-client-certificate',
      'string',
      '',
      'client certificate presented to node agents; default: one issued from the cluster CA at first start',
    ],
    ['kubelet-client-key', 'string', '', 'private key of --kubelet-client-certificate'],
    [
      'kubelet-certificate-authority',
      'string',
      '',
      "CA bundle verifying the node agents' serving certificates (unverified when empty)",
    ],
    [
      'kubelet-preferred-address-types',
      'strings',
      'Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP',
      "the order in which a Node's addresses are tried",
    ],
    ['kubelet-port', 'int', '10250', 'node agent port when the Node does not advertise one'],
    ['kubelet-timeout', 'duration', '5s', 'dial and response-header timeout of requests to node agents'],
  ],
  'Etcd': [
    [
      'storage-backend',
      'string',
      'lmdb',
      'lmdb (local, one machine) or etcd3 (shared; several servers for high availability)',
    ],
    [
      'etcd-servers',
      'strings',
      'http://127.0.0.1:2379',
      'etcd client URLs, comma-separated (with --storage-backend etcd3)',
    ],
    ['etcd-prefix', 'string', '/registry', 'key prefix of this API in etcd'],
    ['etcd-cafile', 'string', '', 'CA bundle to verify the etcd servers (https)'],
    ['etcd-certfile', 'string', '', 'client certificate for etcd'],
    ['etcd-keyfile', 'string', '', 'private key of --etcd-certfile'],
    ['etcd-compaction-interval', 'duration', '5m', 'how often old revisions are compacted in etcd'],
    [
      'encryption-provider-config',
      'string',
      '',
      'EncryptionConfiguration file: encryption at rest of the named resources',
    ],
  ],
  'Auditing': [
    [
      'audit-policy-file',
      'string',
      '',
      'audit Policy file; auditing is on when both it and --audit-log-path are given',
    ],
    ['audit-log-path', 'string', '', 'file the audit events are appended to (- for standard output)'],
    ['audit-log-maxsize', 'int', '0', 'megabytes after which the audit log is rotated (0 = never)'],
    ['audit-log-maxbackup', 'int', '0', 'rotated audit logs kept (0 = all)'],
    ['audit-log-maxage', 'int', '0', 'days a rotated audit log is kept (0 = forever)'],
    ['audit-log-format', 'string', 'json', 'format of the audit log (json)'],
  ],
  'Features': [
    [
      'feature-gates',
      'mapStringBool',
      '',
      'Name=true|false pairs, comma-separated, at their v1.32 stages (docs/lifecycle.md)',
    ],
  ],
  'Authentication': [
    ['anonymous-auth', 'bool', 'true', 'requests without credentials are system:anonymous (false: 401)'],
    [
      'authentication-config',
      'string',
      '',
      'AuthenticationConfiguration file (JWT issuers, anonymous); reloaded on change',
    ],
    ['client-ca-file', 'string', '', 'CA bundle verifying client certificates (the generated CA is always trusted)'],
    ['token-auth-file', 'string', '', 'static bearer tokens: CSV of token,user,uid[,"group1,group2"]'],
    [
      'service-account-issuer',
      'strings',
      'https://platform.default.svc.cluster.local',
      'issuer of service account tokens; repeat to accept several (the first is written); kubernetes.default... under --api-domain k8s.io',
    ],
    [
      'service-account-signing-key-file',
      'string',
      '<cert-dir>/service-account.key',
      'private key signing service account tokens (generated, ECDSA P-256, when no --service-account-* flag is given)',
    ],
    [
      'service-account-key-file',
      'strings',
      '',
      'PEM files of public keys verifying service account tokens (repeatable)',
    ],
    ['service-account-jwks-uri', 'string', '', 'jwks_uri of the discovery document (default: <issuer>/openid/v1/jwks)'],
    [
      'service-account-lookup',
      'bool',
      'true',
      'a service account token is valid only while its account (and bound object) exists',
    ],
    ['api-audiences', 'strings', '', 'audiences of the API (default: the service account issuers)'],
    [
      'enable-bootstrap-token-auth',
      'bool',
      'false',
      'bootstrap tokens (Secrets of type bootstrap.<product>.io/token) authenticate',
    ],
    ['authentication-token-webhook-config-file', 'string', '', 'kubeconfig of a TokenReview webhook'],
    ['authentication-token-webhook-cache-ttl', 'duration', '2m', 'how long webhook answers are cached'],
    [
      'authentication-token-webhook-version',
      'string',
      'v1beta1',
      'TokenReview version sent to the webhook (v1 or v1beta1)',
    ],
    ['requestheader-client-ca-file', 'string', '', 'CA of the authenticating proxy whose user headers are trusted'],
    [
      'requestheader-allowed-names',
      'strings',
      '',
      'client certificate common names allowed as authenticating proxy (empty: any)',
    ],
    ['requestheader-username-headers', 'strings', '', 'headers carrying the user name (e.g. X-Remote-User)'],
    ['requestheader-group-headers', 'strings', '', 'headers carrying the groups (e.g. X-Remote-Group)'],
    [
      'requestheader-extra-headers-prefix',
      'strings',
      '',
      'header prefixes carrying extra user attributes (e.g. X-Remote-Extra-)',
    ],
    ['oidc-issuer-url', 'string', '', 'OpenID Connect issuer (https) whose ID tokens authenticate'],
    ['oidc-client-id', 'string', '', 'client ID the ID tokens must be issued for'],
    ['oidc-username-claim', 'string', 'sub', 'claim holding the user name'],
    ['oidc-username-prefix', 'string', '', 'prefix added to OIDC user names'],
    ['oidc-groups-claim', 'string', '', 'claim holding the groups'],
    ['oidc-groups-prefix', 'string', '', 'prefix added to OIDC groups'],
    ['oidc-ca-file', 'string', '', 'CA bundle verifying the issuer'],
    ['oidc-required-claim', 'mapStringString', '', 'key=value claims an ID token must carry (repeatable)'],
    ['oidc-signing-algs', 'strings', 'RS256', 'accepted JOSE signing algorithms'],
  ],
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

export const FLAG_DOCS: readonly FlagDoc[] = FLAG_SETS.flatMap((set) =>
  SETS[set].map(([name, type, def, usage]) => ({ name, set, type, default: def, usage })),
);

/** The spellings of a flag: `--name`, with the one-letter forms upstream has (-v, -h). */
function flagNames(d: FlagDoc): string {
  return d.name === 'v' ? '-v, --v' : d.name === 'help' ? '-h, --help' : `--${d.name}`;
}

function flagColumn(d: FlagDoc): string {
  return d.type ? `${flagNames(d)} ${d.type}` : flagNames(d);
}

/** `--help`: usage, then each flag set as upstream prints them, each flag with type, default and one line. */
export function renderHelp(): string {
  const lines = [
    'platform-apiserver: a Kubernetes-compatible (v1.32) API server on one machine (LMDB) or etcd.',
    '',
    'Usage:',
    '  platform-apiserver [flags]',
    '',
  ];
  for (const set of FLAG_SETS) {
    lines.push(`${set} flags:`, '');
    const docs = FLAG_DOCS.filter((f) => f.set === set);
    const width = Math.max(...docs.map((d) => flagColumn(d).length));
    for (const d of docs) {
      const def = d.default ? ` (default ${d.default})` : '';
      lines.push(`      ${flagColumn(d).padEnd(width)}   ${d.usage}${def}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** docs/flags.md: the same table in Markdown (generated by scripts/gen-flags.ts; do not edit by hand). */
export function renderFlagsMarkdown(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const out = [
    '<!-- generated by scripts/gen-flags.ts from src/server/flag-docs.ts; do not edit -->',
    '# Flags',
    '',
    'Every flag of `platform-apiserver` (`npm start -- <flags>`, or `npx platform-apiserver <flags>`), grouped by flag set as',
    "upstream kube-apiserver's `--help`. The same table prints with `--help`; a test fails when it and the parser drift apart.",
    'Boolean flags may be given alone (`--reshard` = `--reshard=true`); every flag takes `--name value` or `--name=value`.',
    '',
  ];
  for (const set of FLAG_SETS) {
    out.push(`## ${set} flags`, '', '| Flag | Type | Default | Description |', '|---|---|---|---|');
    for (const d of FLAG_DOCS.filter((f) => f.set === set)) {
      out.push(
        `| \`${flagNames(d)}\` | ${d.type || 'switch'} | ${d.default ? `\`${cell(d.default)}\`` : ''} | ${cell(d.usage)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}

/**
 * `--authorization-config`: an AuthorizationConfiguration file (apiserver.config.plat.io/v1,
 * YAML or JSON), decoded strictly, defaulted and validated as upstream (same field paths and
 * messages), then turned into the ordered authorizers of the chain. The file is watched and
 * re-read at least every 60 s; a changed, valid file replaces the chain's authorizers, an
 * invalid one is reported and the running configuration kept.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync, unwatchFile, watchFile } from 'node:fs';
import { isAbsolute } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isRecord } from '../../api/object.js';
import type { Authorizer } from './authorizer.js';
import { loadKubeconfig } from './kubeconfig.js';
import { MAX_MATCH_CONDITIONS, MatchConditions, compileCondition } from './match-conditions.js';
import { parseGoDuration } from './options.js';
import { WebhookAuthorizer } from './webhook.js';

export const CONFIG_TYPES = ['AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook'] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

export interface WebhookConfig {
  timeoutMs: number;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  failurePolicy: 'NoOpinion' | 'Deny';
  kubeConfigFile: string;
  matchConditions: string[];
}

export interface AuthorizerConfig {
  type: ConfigType;
  name: string;
  webhook?: WebhookConfig;
}

const DEFAULT_AUTHORIZED_TTL = '5m0s';
const DEFAULT_UNAUTHORIZED_TTL = '30s';
const MAX_TIMEOUT_MS = 30_000;
export const RELOAD_INTERVAL_MS = 60_000;

const q = JSON.stringify;
const supported = (vs: readonly string[]) => `supported values: ${vs.map((v) => q(v)).join(', ')}`;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** An authorizers[] entry as decoded: every field is checked before use (an entry may be null). */
type RawAuthorizer = { type?: unknown; name?: unknown; webhook?: unknown } | null | undefined;

/** A webhook entry as decoded (an object: checked by the caller); every field is checked before use. */
interface RawWebhook {
  timeout?: unknown;
  authorizedTTL?: unknown;
  unauthorizedTTL?: unknown;
  subjectAccessReviewVersion?: unknown;
  matchConditionSubjectAccessReviewVersion?: unknown;
  failurePolicy?: unknown;
  connectionInfo?: { type?: unknown; kubeConfigFile?: unknown } | null;
  matchConditions?: unknown;
}

/** Strict decoding: every key must be known (upstream's `strict decoding error: unknown field`). */
function strict(obj: unknown, path: string, known: readonly string[], errs: string[]): void {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return;
  for (const k of Object.keys(obj)) if (!known.includes(k)) errs.push(`unknown field ${q(path ? `${path}.${k}` : k)}`);
}

/** A Go duration field: returns ms, or records the decode error. */
function duration(v: unknown, field: string, errs: string[]): number | undefined {
  if (v === undefined || v === null) return undefined;
  const ms = typeof v === 'string' ? parseGoDuration(v) : undefined;
  if (ms === undefined) errs.push(`${field}: time: invalid duration ${q(String(v))}`);
  return ms;
}

const goDuration = (ms: number): string => {
  if (ms === 0) return '0s';
  if (ms < 0) return `-${goDuration(-ms)}`;
  const h = Math.floor(ms / 3_600_000),
    m = Math.floor((ms % 3_600_000) / 60_000),
    s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
};

/** connectionInfo: KubeConfigFile with an absolute path to a regular file (InClusterConfig is refused here). */
function validateConnectionInfo(
  ci: { type?: unknown; kubeConfigFile?: unknown },
  f: string,
  errs: string[],
  decodeErrs: string[],
): unknown {
  strict(ci, `${f}.connectionInfo`, ['type', 'kubeConfigFile'], decodeErrs);
  const file = ci.kubeConfigFile;
  if (!ci.type) errs.push(`${f}.connectionInfo.type: Required value`);
  else if (ci.type === 'InClusterConfig') {
    if (file !== undefined)
      errs.push(
        `${f}.connectionInfo.kubeConfigFile: Invalid value: ${q(file)}: can only be set when type=KubeConfigFile`,
      );
    else
      errs.push(
        `${f}.connectionInfo.type: Invalid value: "InClusterConfig": not supported when the API server itself serves the SubjectAccessReview API`,
      );
  } else if (ci.type === 'KubeConfigFile') {
    if (!file) errs.push(`${f}.connectionInfo.kubeConfigFile: Required value`);
    else if (!isAbsolute(String(file)))
      errs.push(`${f}.connectionInfo.kubeConfigFile: Invalid value: ${q(file)}: must be an absolute path`);
    else {
      try {
        if (!statSync(String(file)).isFile())
          errs.push(`${f}.connectionInfo.kubeConfigFile: Invalid value: ${q(file)}: must be a regular file`);
      } catch (e) {
        errs.push(
          `${f}.connectionInfo.kubeConfigFile: Invalid value: ${q(file)}: error loading file: ${(e as Error).message}`,
        );
      }
    }
  } else
    errs.push(
      `${f}.connectionInfo.type: Unsupported value: ${q(ci.type)}: ${supported(['InClusterConfig', 'KubeConfigFile'])}`,
    );
  return file;
}

/** matchConditions: at most MAX_MATCH_CONDITIONS CEL expressions, each unique and compiling. */
function validateMatchConditions(list: unknown, f: string, errs: string[], decodeErrs: string[]): string[] {
  const conditions: string[] = [];
  const mcs = Array.isArray(list) ? list : [];
  if (mcs.length > MAX_MATCH_CONDITIONS)
    errs.push(`${f}.matchConditions: Too many: ${mcs.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
  else {
    mcs.forEach((mc: { expression?: unknown } | null | undefined, i: number) => {
      const p = `${f}.matchConditions[${i}].expression`;
      strict(mc, `${f}.matchConditions[${i}]`, ['expression'], decodeErrs);
      const expr = typeof mc?.expression === 'string' ? mc.expression : '';
      if (expr.trim() === '') return errs.push(`${p}: Required value`);
      if (conditions.includes(expr)) return errs.push(`${p}: Duplicate value: ${q(expr)}`);
      conditions.push(expr);
      try {
        compileCondition(expr);
      } catch (e) {
        errs.push(`${p}: Invalid value: ${q(expr)}: compilation failed: ${(e as Error).message}`);
      }
    });
  }
  return conditions;
}

function validateWebhook(w: RawWebhook, f: string, errs: string[], decodeErrs: string[]): WebhookConfig | undefined {
  strict(
    w,
    f,
    [
      'timeout',
      'authorizedTTL',
      'unauthorizedTTL',
      'subjectAccessReviewVersion',
      'matchConditionSubjectAccessReviewVersion',
      'failurePolicy',
      'connectionInfo',
      'matchConditions',
    ],
    decodeErrs,
  );
  const timeout = duration(w.timeout, `${f}.timeout`, decodeErrs) ?? 0;
  const authorizedTtl =
    duration(w.authorizedTTL, `${f}.authorizedTTL`, decodeErrs) || parseGoDuration(DEFAULT_AUTHORIZED_TTL)!;
  const unauthorizedTtl =
    duration(w.unauthorizedTTL, `${f}.unauthorizedTTL`, decodeErrs) || parseGoDuration(DEFAULT_UNAUTHORIZED_TTL)!;
  const before = errs.length;
  if (timeout === 0) errs.push(`${f}.timeout: Required value`);
  else if (timeout > MAX_TIMEOUT_MS || timeout < 0)
    errs.push(`${f}.timeout: Invalid value: ${q(goDuration(timeout))}: must be > 0s and <= 30s`);
  if (authorizedTtl < 0) errs.push(`${f}.authorizedTTL: Invalid value: ${q(goDuration(authorizedTtl))}: must be > 0s`);
  if (unauthorizedTtl < 0)
    errs.push(`${f}.unauthorizedTTL: Invalid value: ${q(goDuration(unauthorizedTtl))}: must be > 0s`);
  const sarv = w.subjectAccessReviewVersion ?? '';
  if (sarv === '') errs.push(`${f}.subjectAccessReviewVersion: Required value`);
  else if (sarv !== 'v1' && sarv !== 'v1beta1')
    errs.push(`${f}.subjectAccessReviewVersion: Unsupported value: ${q(sarv)}: ${supported(['v1', 'v1beta1'])}`);
  const mcv = w.matchConditionSubjectAccessReviewVersion ?? '';
  if (mcv === '') errs.push(`${f}.matchConditionSubjectAccessReviewVersion: Required value`);
  else if (mcv !== 'v1')
    errs.push(`${f}.matchConditionSubjectAccessReviewVersion: Unsupported value: ${q(mcv)}: ${supported(['v1'])}`);
  const fp = w.failurePolicy ?? '';
  if (fp === '') errs.push(`${f}.failurePolicy: Required value`);
  else if (fp !== 'NoOpinion' && fp !== 'Deny')
    errs.push(`${f}.failurePolicy: Unsupported value: ${q(fp)}: ${supported(['NoOpinion', 'Deny'])}`);
  const file = validateConnectionInfo(w.connectionInfo ?? {}, f, errs, decodeErrs);
  const conditions = validateMatchConditions(w.matchConditions, f, errs, decodeErrs);
  if (errs.length > before) return undefined;
  return {
    timeoutMs: timeout,
    authorizedTtlMs: authorizedTtl,
    unauthorizedTtlMs: unauthorizedTtl,
    // both checked against their supported values above (no error was added)
    subjectAccessReviewVersion: sarv as WebhookConfig['subjectAccessReviewVersion'],
    failurePolicy: fp as WebhookConfig['failurePolicy'],
    kubeConfigFile: String(file),
    matchConditions: conditions,
  };
}

/**
 * Decodes and validates a configuration document; throws one error listing every problem
 * (upstream's aggregate: one as is, several as `[a, b]`).
 */
export function parseAuthorizationConfig(text: string, groups: readonly string[]): AuthorizerConfig[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new Error(`couldn't decode: ${(e as Error).message}`);
  }
  if (!isRecord(doc)) throw new Error("Object 'Kind' is missing in the configuration");
  const [group, version] = String(doc.apiVersion ?? '').split('/');
  if (
    doc.kind !== 'AuthorizationConfiguration' ||
    !groups.includes(group!) ||
    (version !== 'v1' && version !== 'v1beta1')
  ) {
    throw new Error(
      `no kind ${q(String(doc.kind ?? ''))} is registered for version ${q(String(doc.apiVersion ?? ''))}`,
    );
  }
  const decodeErrs: string[] = [],
    errs: string[] = [];
  strict(doc, '', ['apiVersion', 'kind', 'authorizers'], decodeErrs);
  const list: RawAuthorizer[] = Array.isArray(doc.authorizers) ? doc.authorizers : [];
  if (list.length === 0) errs.push('authorizers: Required value: at least one authorization mode must be defined');
  const types = new Set<string>(),
    names = new Set<string>();
  const out: AuthorizerConfig[] = [];
  list.forEach((a, i) => {
    const f = `authorizers[${i}]`;
    strict(a, f, ['type', 'name', 'webhook'], decodeErrs);
    const type = String(a?.type ?? '');
    if (!type) return errs.push(`${f}.type: Required value`);
    if (!(CONFIG_TYPES as readonly string[]).includes(type))
      return errs.push(`${f}.type: Unsupported value: ${q(type)}: ${supported([...CONFIG_TYPES].sort())}`);
    if (types.has(type) && type !== 'Webhook') return errs.push(`${f}.type: Duplicate value: ${q(type)}`);
    types.add(type);
    const name = String(a?.name ?? '');
    if (!name) errs.push(`${f}.name: Required value`);
    else if (names.has(name)) errs.push(`${f}.name: Duplicate value: ${q(name)}`);
    else if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
      errs.push(
        `${f}.name: Invalid value: ${q(name)}: authorizer name is invalid: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      );
    }
    names.add(name);
    if (type !== 'Webhook') {
      if (a?.webhook !== undefined && a?.webhook !== null)
        errs.push(`${f}.webhook: Invalid value: "non-null": may only be specified when type=Webhook`);
      return out.push({ type: type as ConfigType, name });
    }
    if (!a?.webhook || typeof a.webhook !== 'object')
      return errs.push(`${f}.webhook: Required value: required when type=Webhook`);
    const webhook = validateWebhook(a.webhook, `${f}.webhook`, errs, decodeErrs);
    if (webhook) out.push({ type: 'Webhook', name, webhook });
  });
  if (decodeErrs.length) throw new Error(`strict decoding error: ${decodeErrs.join(', ')}`);
  if (errs.length) throw new Error(errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
  return out;
}

/** What building the authorizers of a configuration needs from the server. */
export interface ConfigDeps {
  /** the served groups the file's apiVersion may use (apiserver.config.<domain>) */
  configGroups: readonly string[];
  /** `authorization.<domain>`: the group of the reviews sent to webhooks */
  reviewGroup: string;
  builtIn: Partial<Record<ConfigType, Authorizer>>;
}

/** The authorizers of a validated configuration, in order (kubeconfig files are read here). */
export function buildAuthorizers(cfg: readonly AuthorizerConfig[], deps: ConfigDeps): Authorizer[] {
  return cfg.map((a) => {
    if (a.type !== 'Webhook') {
      const z = deps.builtIn[a.type];
      if (!z) throw new Error(`authorizers: ${a.type} is not available`);
      return z;
    }
    const w = a.webhook!;
    return new WebhookAuthorizer({
      name: a.name,
      client: loadKubeconfig(w.kubeConfigFile),
      reviewGroup: deps.reviewGroup,
      subjectAccessReviewVersion: w.subjectAccessReviewVersion,
      authorizedTtlMs: w.authorizedTtlMs,
      unauthorizedTtlMs: w.unauthorizedTtlMs,
      timeoutMs: w.timeoutMs,
      failurePolicy: w.failurePolicy,
      matchConditions: w.matchConditions.length ? new MatchConditions(w.matchConditions) : undefined,
    });
  });
}

/** Reads, validates and builds a configuration file; errors name the file. */
export function loadAuthorizationConfig(path: string, deps: ConfigDeps): { authorizers: Authorizer[]; hash: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`failed to read authorization config file ${q(path)}: ${(e as Error).message}`);
  }
  try {
    return {
      authorizers: buildAuthorizers(parseAuthorizationConfig(text, deps.configGroups), deps),
      hash: createHash('sha256').update(text).digest('hex'),
    };
  } catch (e) {
    throw new Error(`invalid authorization config file ${q(path)}: ${(e as Error).message}`);
  }
}

/**
 * Keeps a configuration file applied: polls its status every second (a change is noticed
 * quickly, also when the file is replaced), and re-reads it every 60 s regardless. Only a
 * changed content is rebuilt; `apply` receives the new authorizers, `report` any failure.
 */
export class ConfigReloader {
  private timer: NodeJS.Timeout | undefined;
  private watching = false;

  constructor(
    private readonly path: string,
    private hash: string,
    private readonly deps: ConfigDeps,
    private readonly apply: (authorizers: Authorizer[]) => void,
    private readonly report: (message: string) => void,
    private readonly intervalMs = RELOAD_INTERVAL_MS,
  ) {}

  start(): void {
    watchFile(this.path, { interval: 1000, persistent: false }, () => this.check());
    this.watching = true;
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.watching) unwatchFile(this.path);
    this.watching = false;
    if (this.timer) clearInterval(this.timer);
  }

  /** Re-reads the file; rebuilds and applies it when its content changed and is valid. */
  check(): void {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      return this.report(`authorization config reload failed: ${(e as Error).message}`);
    }
    const hash = createHash('sha256').update(text).digest('hex');
    if (hash === this.hash) return;
    try {
      const authorizers = buildAuthorizers(parseAuthorizationConfig(text, this.deps.configGroups), this.deps);
      this.hash = hash;
      this.apply(authorizers);
    } catch (e) {
      this.hash = hash;
      this.report(`authorization config reload failed, keeping the previous configuration: ${(e as Error).message}`);
    }
  }
}

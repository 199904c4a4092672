/**
 * The JWT authenticators in force (OIDC flags or the authentication configuration's `jwt[]`),
 * swappable as a whole when the configuration file is reloaded. Each authenticator only claims
 * tokens of its own issuer, so the set asks them in order and the first user wins.
 */
import { createHash } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { NOT_MINE, firstUser, type MaybeAsync, type AuthResult, type TokenAuthenticator } from '../../api/user.js';
import { JwtAuthenticator } from './authenticator.js';
import {
  ALL_SIGNING_ALGS,
  parseAuthenticationConfig,
  type AuthenticationConfig,
  type JwtAuthenticatorSpec,
  type ValidateContext,
} from './config.js';

export class JwtSet implements TokenAuthenticator {
  private list: JwtAuthenticator[] = [];

  get size(): number {
    return this.list.length;
  }

  authenticateToken(token: string, _audiences: readonly string[]): MaybeAsync<AuthResult> {
    const l = this.list;
    if (l.length === 0) return NOT_MINE;
    if (l.length === 1) return l[0]!.authenticateToken(token);
    return firstUser(l, (a) => a.authenticateToken(token));
  }

  /** Puts a new list in force and stops the old one's background work. */
  swap(next: JwtAuthenticator[]): void {
    const old = this.list;
    this.list = next;
    for (const a of old) if (!next.includes(a)) a.stop();
  }

  stop(): void {
    this.swap([]);
  }
}

export interface ConfigFileDeps {
  group: string;
  validate: ValidateContext;
  log: (m: string) => void;
  /** how long a reload waits for new issuers' keys before keeping the old configuration */
  readyTimeoutMs?: number;
  /** periodic re-check (upstream: at least every minute) */
  pollMs?: number;
}

/**
 * `--authentication-config`: read and validated at start (errors are startup errors naming the
 * field), then watched. A changed file is validated and its JWT authenticators built; they
 * replace the running ones once their keys are fetched. A broken or unreachable new file keeps
 * the last good configuration and logs why. `anonymous` takes effect at start only.
 */
export class AuthenticationConfigFile {
  private lastText = '';
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  /** successful reloads (tests and logs) */
  reloads = 0;

  constructor(
    readonly path: string,
    private readonly set: JwtSet,
    private readonly deps: ConfigFileDeps,
  ) {}

  /** Reads the file at start; throws the startup error. */
  load(): AuthenticationConfig {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      throw new Error(`--authentication-config: cannot read ${this.path}: ${(e as Error).message}`);
    }
    let cfg: AuthenticationConfig;
    try {
      cfg = parseAuthenticationConfig(text, this.deps.group, this.deps.validate);
    } catch (e) {
      throw new Error(`--authentication-config ${this.path}: invalid authentication config: ${(e as Error).message}`);
    }
    this.lastText = text;
    this.set.swap(buildJwt(cfg.jwt, ALL_SIGNING_ALGS, this.deps.log));
    return cfg;
  }

  watch(): void {
    const kick = () => {
      if (this.debounce) clearTimeout(this.debounce);
      this.debounce = setTimeout(() => {
        void this.reload();
      }, 50);
      this.debounce.unref();
    };
    try {
      // the directory, not the file: editors and config maps replace files by renaming
      this.watcher = watch(dirname(this.path), (_ev, name) => {
        if (!name || name === basename(this.path)) kick();
      });
      this.watcher.unref();
    } catch (e) {
      this.deps.log(`--authentication-config: cannot watch ${this.path}: ${(e as Error).message}; polling only`);
    }
    this.timer = setInterval(kick, this.deps.pollMs ?? 60_000);
    this.timer.unref();
  }

  reload(): Promise<void> {
    this.reloading ??= this.doReload().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async doReload(): Promise<void> {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      return this.deps.log(
        `--authentication-config: cannot read ${this.path}, keeping the last good configuration: ${(e as Error).message}`,
      );
    }
    if (text === this.lastText) return;
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
    let cfg: AuthenticationConfig;
    try {
      cfg = parseAuthenticationConfig(text, this.deps.group, this.deps.validate);
    } catch (e) {
      this.lastText = text; // reported once; a later change is tried again
      return this.deps.log(
        `--authentication-config ${this.path} (sha256 ${hash}): invalid authentication config, keeping the last good configuration: ${(e as Error).message}`,
      );
    }
    const next = buildJwt(cfg.jwt, ALL_SIGNING_ALGS, this.deps.log);
    const timeout = this.deps.readyTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const ready = await Promise.race([
      Promise.all(next.map((a) => a.keys.ready)).then(() => true),
      new Promise<boolean>((d) => {
        timer = setTimeout(() => d(false), timeout);
      }),
    ]);
    clearTimeout(timer);
    if (!ready) {
      for (const a of next) a.stop();
      // not remembered as applied: the periodic check tries again
      return this.deps.log(
        `--authentication-config ${this.path} (sha256 ${hash}): issuer keys not available within ${timeout} ms, keeping the last good configuration`,
      );
    }
    this.lastText = text;
    this.set.swap(next);
    this.reloads++;
    this.deps.log(
      `--authentication-config ${this.path} (sha256 ${hash}): reloaded, ${next.length} JWT authenticator(s)`,
    );
  }

  stop(): void {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
  }
}

export function buildJwt(
  specs: JwtAuthenticatorSpec[],
  algorithms: string[],
  log: (m: string) => void,
): JwtAuthenticator[] {
  return specs.map((s) => new JwtAuthenticator(s, algorithms, { log }));
}

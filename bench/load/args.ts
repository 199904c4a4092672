/** Flags of the load CLI (`npm run bench -- <scenario...> --server URL ...`), each bounded. */
import type { Options } from './scenarios/ctx.js';
import { MIX, MIX_KINDS } from './scenarios/mixed.js';
import { scenarioNames } from '../scenario-registry.js';
import { UsageError } from '../lib/usage-errors.js';

/** the load CLI's scenarios, in the order of the one registry (bench/scenario-registry.ts) */
export const LOAD_SCENARIOS: readonly string[] = scenarioNames('load');
/** scenarios only the load CLI knows (and `all`): naming one selects it even without a load flag */
export const LOAD_ONLY: ReadonlySet<string> = new Set([
  ...LOAD_SCENARIOS.filter((name) => !scenarioNames('wrk').includes(name)),
  'all',
]);
/** flags only the load CLI knows: any of them selects it */
export const LOAD_FLAGS = new Set([
  '--server',
  '--kubeconfig',
  '--context',
  '--token',
  '--concurrency',
  '--out',
  '--qps',
  '--mix',
  '--objects',
  '--namespaces',
  '--per-namespace',
  '--nodes',
  '--kinds',
  '--watchers',
  '--write-rate',
  '--informers',
  '--relist',
  '--max-requests',
  '--no-ceilings',
  '--no-delete',
  '--progress',
  '--no-progress',
  '--server-arg',
  '--insecure',
  '--server-pid',
]);

export interface LoadArgs {
  scenarios: string[];
  server?: string;
  kubeconfig?: string;
  context?: string;
  token?: string;
  insecure: boolean;
  out?: string;
  progress?: boolean;
  /** a local server's pid, to sample its RSS/CPU from /proc */
  serverPid?: number;
  /** extra flags for a server the bench starts */
  serverArgs: string[];
  opts: Options;
}

// (defined in bench/lib so the load client can throw them without importing this module, which
// imports the scenario registry, which imports the client)
export { TargetError, UsageError } from '../lib/usage-errors.js';

export function parseDuration(flag: string, v: string, maxSec: number): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?$/.exec(v);
  if (!m) throw new UsageError(`${flag} must look like 500ms, 10s, 1m or 10, got "${v}"`);
  const sec = Number(m[1]) * ({ ms: 0.001, s: 1, m: 60, h: 3600 }[m[2] ?? 's'] ?? 1);
  if (!(sec >= 0.1 && sec <= maxSec)) throw new UsageError(`${flag} must be between 0.1s and ${maxSec}s`);
  return sec;
}

function int(flag: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be an integer in ${min}..${max}`);
  return n;
}

export function isLoadInvocation(argv: string[]): boolean {
  return argv.some((a) => LOAD_FLAGS.has(a.split('=')[0]!) || LOAD_ONLY.has(a));
}

export function parseLoadArgs(argv: string[]): LoadArgs {
  const o: Options = {
    durationSec: 10,
    concurrency: 8,
    qps: 200,
    mix: MIX.map(([k, w]) => [k, w]),
    objects: 500,
    namespaces: 10,
    perNamespace: 10,
    nodes: 10,
    kinds: ['pods', 'configmaps', 'secrets'],
    watchers: 100,
    writeRate: 50,
    informers: 20,
    relistSec: 5,
    maxRequests: 10_000_000,
    ceilings: true,
    deleteAfter: true,
  };
  const a: LoadArgs = { scenarios: [], insecure: false, serverArgs: [], opts: o };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--server':
        a.server = value();
        break;
      case '--kubeconfig':
        a.kubeconfig = value();
        break;
      case '--context':
        a.context = value();
        break;
      case '--token':
        a.token = value();
        break;
      case '--insecure':
        a.insecure = true;
        break;
      case '--out':
        a.out = value();
        break;
      case '--progress':
        a.progress = true;
        break;
      case '--no-progress':
        a.progress = false;
        break;
      case '--server-arg':
        a.serverArgs.push(value());
        break;
      case '--server-pid':
        a.serverPid = int(flag, value(), 1, 2 ** 31 - 1);
        break;
      case '--duration':
        o.durationSec = parseDuration(flag, value(), 86_400);
        break;
      case '--concurrency':
        o.concurrency = int(flag, value(), 1, 10_000);
        break;
      case '--qps':
        o.qps = int(flag, value(), 1, 1_000_000);
        break;
      case '--mix': {
        const pairs = value()
          .split(',')
          .filter(Boolean)
          .map((p) => p.split('='));
        if (
          !pairs.length ||
          pairs.some(([k, w]) => !MIX_KINDS.includes(k!) || !/^[0-9]+$/.test(w ?? '')) ||
          pairs.every(([, w]) => Number(w) === 0)
        ) {
          throw new UsageError(
            `--mix must look like get=40,list=10 with kinds from ${MIX_KINDS.join(', ')} and whole weights, not all 0`,
          );
        }
        o.mix = pairs.map(([k, w]) => [k!, Number(w)]);
        break;
      }
      case '--objects':
        o.objects = int(flag, value(), 1, 1_000_000);
        break;
      case '--namespaces':
        o.namespaces = int(flag, value(), 1, 100_000);
        break;
      case '--per-namespace':
        o.perNamespace = int(flag, value(), 1, 100_000);
        break;
      case '--nodes':
        o.nodes = int(flag, value(), 0, 100_000);
        break;
      case '--kinds': {
        const ks = value().split(',').filter(Boolean);
        const ok = ['pods', 'configmaps', 'secrets'];
        if (!ks.length || ks.some((k) => !ok.includes(k)) || new Set(ks).size !== ks.length)
          throw new UsageError(`--kinds must be a comma-separated subset of ${ok.join(',')}`);
        o.kinds = ks as Options['kinds'];
        break;
      }
      case '--watchers':
        o.watchers = int(flag, value(), 1, 100_000);
        break;
      case '--write-rate':
        o.writeRate = int(flag, value(), 1, 1_000_000);
        break;
      case '--informers':
        o.informers = int(flag, value(), 1, 100_000);
        break;
      case '--relist':
        o.relistSec = Math.max(1, Math.round(parseDuration(flag, value(), 3600)));
        break;
      case '--max-requests':
        o.maxRequests = int(flag, value(), 1, 1_000_000_000);
        break;
      case '--no-ceilings':
        o.ceilings = false;
        break;
      case '--no-delete':
        o.deleteAfter = false;
        break;
      default:
        if (flag.startsWith('--')) throw new UsageError(`unknown flag ${flag}`);
        if (flag === 'all') a.scenarios.push(...LOAD_SCENARIOS);
        else if (!LOAD_SCENARIOS.includes(flag))
          throw new UsageError(`unknown scenario "${flag}" (known: ${LOAD_SCENARIOS.join(', ')}, all)`);
        else a.scenarios.push(flag);
    }
  }
  if (a.scenarios.length === 0) throw new UsageError(`name a scenario: ${LOAD_SCENARIOS.join(', ')} or all`);
  return a;
}

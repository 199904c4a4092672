/**
 * A small Prometheus registry with the upstream metric stability framework: every family has a
 * stability class (ALPHA, BETA, STABLE) shown in its HELP text; a deprecated family's HELP is
 * prefixed `(Deprecated from x.y)`; three releases after its deprecation it is hidden (not
 * registered) unless `--show-hidden-metrics-for-version` names the previous release, and one
 * release later it is gone. Families render themselves; nothing is formatted until a scrape.
 */

export type StabilityLevel = 'ALPHA' | 'BETA' | 'STABLE';

export interface MetricOpts {
  name: string;
  help: string;
  stability: StabilityLevel;
  /** "x.y": the release that deprecated the metric */
  deprecatedVersion?: string;
}

/** One metric family: writes its `# HELP`/`# TYPE` header and samples. */
export interface Family {
  readonly opts: MetricOpts;
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** appends the sample lines (no header) */
  samples(out: string[]): void;
}

/** The server's release and the hidden-metrics override, as "major.minor". */
export interface MetricsVersion {
  current: string;
  showHiddenFor?: string;
}

function minor(v: string): [number, number] {
  const m = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(v);
  if (!m) throw new Error(`invalid version "${v}"`);
  return [Number(m[1]), Number(m[2])];
}

/** Releases between two "x.y" versions of the same major (b - a). */
function releasesBetween(a: string, b: string): number {
  const [ma, na] = minor(a);
  const [mb, nb] = minor(b);
  return mb === ma ? nb - na : (mb - ma) * 100;
}

/** `--show-hidden-metrics-for-version`: only the previous minor release is accepted (as upstream). */
export function validateShowHidden(value: string, current: string): void {
  const [maj, min] = minor(current);
  const previous = `${maj}.${min - 1}`;
  if (value !== previous) {
    throw new Error(
      `--show-hidden-metrics-for-version must be omitted or have the value '${previous}'. Only the previous minor version is allowed`,
    );
  }
}

export type Visibility = 'shown' | 'hidden' | 'deleted';

/** Shown until 3 releases after deprecation, hidden for the 4th, deleted afterwards. */
export function visibility(opts: MetricOpts, version: MetricsVersion): Visibility {
  if (!opts.deprecatedVersion) return 'shown';
  const age = releasesBetween(opts.deprecatedVersion, version.current);
  if (age < 3) return 'shown';
  if (age === 3) return version.showHiddenFor ? 'shown' : 'hidden';
  return 'deleted';
}

const escapeHelp = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
/** A label value as the text format wants it (backslash, quote and newline escaped). */
export const escapeLabel = (s: string): string => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** `a="x",b="y"`: the label body, sorted by name as the Prometheus client writes it; built once per series. */
export function labelPairs(names: readonly string[], values: readonly string[]): string {
  return names
    .map((n, i) => [n, values[i] ?? ''] as const)
    .sort((x, y) => (x[0] < y[0] ? -1 : 1))
    .map(([n, v]) => `${n}="${escapeLabel(v)}"`)
    .join(',');
}

export class MetricsRegistry {
  private readonly families: Family[] = [];
  /** deprecation warnings logged at registration, as upstream */
  readonly warnings: string[] = [];

  constructor(readonly version: MetricsVersion) {}

  /** Registers a family unless it is hidden or deleted; returns it either way (recording stays cheap). */
  register<F extends Family>(f: F): F {
    const v = visibility(f.opts, this.version);
    if (f.opts.deprecatedVersion && v !== 'deleted')
      this.warnings.push(`metric ${f.opts.name} is deprecated from ${f.opts.deprecatedVersion}`);
    if (v === 'shown') this.families.push(f);
    return f;
  }

  isRegistered(name: string): boolean {
    return this.families.some((f) => f.opts.name === name);
  }

  /** The text exposition format (version 0.0.4), families in registration order. */
  render(): string {
    const out: string[] = [];
    for (const f of this.families) {
      const { name, help, stability, deprecatedVersion } = f.opts;
      const text = deprecatedVersion ? `(Deprecated from ${deprecatedVersion}) ${help}` : help;
      const samples: string[] = [];
      f.samples(samples);
      // as the Prometheus client: a family without samples is not written at all
      if (samples.length === 0) continue;
      // a loop, not a spread: a family can hold more samples than a call has argument slots
      out.push(`# HELP ${name} [${stability}] ${escapeHelp(text)}`, `# TYPE ${name} ${f.type}`);
      for (const line of samples) out.push(line);
    }
    out.push('');
    return out.join('\n');
  }
}

/** A gauge or counter family whose values are computed at scrape time. */
export class CollectedFamily implements Family {
  constructor(
    readonly opts: MetricOpts,
    readonly type: 'counter' | 'gauge',
    private readonly labels: readonly string[],
    private readonly collect: () => Iterable<[readonly string[], number]>,
  ) {}

  samples(out: string[]): void {
    for (const [values, v] of this.collect()) {
      out.push(
        this.labels.length ? `${this.opts.name}{${labelPairs(this.labels, values)}} ${v}` : `${this.opts.name} ${v}`,
      );
    }
  }
}

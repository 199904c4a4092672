/**
 * The served resource table: the generated RESOURCES with group names in the configured domain,
 * filtered by the stability defaults and `--runtime-config`. Every lookup map is built once in
 * the constructor; nothing is computed per request.
 */
import { groupFor, type Identity } from '../api/identity.js';
import { RESOURCES } from './generated/resources.js';
import type { Deprecation, Lifecycle, ResourceDef, Stability } from './types.js';
import { reached } from '../api/release.js';
import { GO_BOOLS } from '../api/feature-gates.js';
import { customDefs, type CustomType } from './crd/types.js';

/** One served group: versions ordered by priority, the preferred one first. */
export interface GroupVersions {
  /** "" for the core group */
  name: string;
  versions: string[];
  preferredVersion: string;
}

/** `--runtime-config` parsed: each level falls back to the next broader one. */
interface Overrides {
  all?: boolean;
  levels: Map<Stability, boolean>;
  versions: Map<string, boolean>;
  resources: Map<string, boolean>;
}

/**
 * Upstream discovery order of the groups (aggregator group priorities, highest first), in
 * reference names; groups not listed follow in alphabetical order.
 */
const GROUP_ORDER = [
  '',
  'apiregistration.plat.io',
  'apps',
  'events.plat.io',
  'authentication.plat.io',
  'authorization.plat.io',
  'autoscaling',
  'batch',
  'certificates.plat.io',
  'networking.plat.io',
  'policy',
  'rbac.authorization.plat.io',
  'storage.plat.io',
  'admissionregistration.plat.io',
  'apiextensions.plat.io',
  'scheduling.plat.io',
  'coordination.plat.io',
  'node.plat.io',
  'discovery.plat.io',
  'flowcontrol.apiserver.plat.io',
  'internal.apiserver.plat.io',
  'resource.plat.io',
  'storagemigration.plat.io',
];

const LEVEL_KEYS: Record<string, Stability> = { 'api/ga': 'stable', 'api/beta': 'beta', 'api/alpha': 'alpha' };
const CORE_KEYS = new Set(['v1', '/v1', 'api/v1']);
/** --runtime-config: a bare key (empty value) enables; otherwise strconv.ParseBool */
const BOOLS: Record<string, boolean> = { '': true, ...GO_BOOLS };

const gvKey = (group: string, version: string): string => `${group}/${version}`;
const gvrKey = (group: string, version: string, resource: string): string => `${group}/${version}/${resource}`;
/** A group-version as users write it: "v1" for the core group. */
const gvName = (group: string, version: string): string => (group === '' ? version : `${group}/${version}`);

function fail(problem: string): never {
  throw new Error(`--runtime-config: ${problem}`);
}

/** Kube-aware version order: stable before beta before alpha, then higher numbers first. */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): number[] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [-1, 0, 0];
    const level = m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0;
    return [level, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i]! - ra[i]!;
  return a < b ? -1 : a > b ? 1 : 0;
}

function renamed(identity: Identity, def: ResourceDef): ResourceDef {
  const subresources = def.subresources.map((s) => ({ ...s, group: groupFor(identity, s.group) }));
  const out: ResourceDef = { ...def, group: groupFor(identity, def.group), subresources };
  const l = def.lifecycle;
  if (l) {
    const replacement = l.replacement && { ...l.replacement, group: groupFor(identity, l.replacement.group) };
    out.lifecycle = { ...l, ...(replacement ? { replacement } : {}) };
    if (reached(l.deprecated)) out.deprecation = deprecationOf(out, out.lifecycle);
  }
  return Object.freeze(out);
}

/** Upstream's deprecation WarningMessage, built once per resource. */
function deprecationOf(def: ResourceDef, l: Lifecycle): Deprecation {
  let warning = `${gvName(def.group, def.version)} ${def.kind} is deprecated in v${l.deprecated}+, unavailable in v${l.removed}+`;
  if (l.replacement) warning += `; use ${gvName(l.replacement.group, l.replacement.version)} ${l.replacement.kind}`;
  return { warning, removedRelease: l.removed };
}

export class Registry {
  readonly identity: Identity;
  private readonly all: readonly ResourceDef[];
  private readonly builtin: readonly ResourceDef[];
  private enabled: readonly ResourceDef[];
  /** group → version → resource: lookup's index (every request), no key string built per call */
  private readonly byPath = new Map<string, Map<string, Map<string, ResourceDef>>>();
  private readonly byKindKey = new Map<string, ResourceDef>();
  private readonly byGroupVersion = new Map<string, ResourceDef[]>();
  private groupList: readonly GroupVersions[];
  private readonly byGroup = new Map<string, GroupVersions>();
  private custom: readonly CustomType[] = [];
  /** bumped by every change of the served set (discovery documents are rebuilt) */
  generation = 0;

  /**
   * @param runtimeConfig the `--runtime-config` value, e.g. `batch/v1=false,api/beta=true`
   * @throws Error `--runtime-config: <problem>` for an unknown group, version or resource, or a bad value
   */
  constructor(
    identity: Identity,
    runtimeConfig = '',
    resources: readonly ResourceDef[] = RESOURCES,
    gates?: Readonly<Record<string, boolean>>,
  ) {
    this.identity = identity;
    this.all = Object.freeze(resources.map((r) => renamed(identity, gates ? withoutGated(r, gates) : r)));
    const overrides = parseRuntimeConfig(runtimeConfig, this.all);
    this.builtin = Object.freeze(this.all.filter((r) => isEnabled(r, overrides)));
    this.enabled = this.builtin;
    this.groupList = [];
    this.rebuild();
  }

  /**
   * Serves exactly these custom resource types (established CRDs) besides the built-in
   * resources; a custom resource never shadows a built-in one, and no custom type is served in
   * a group the server serves itself (its objects would share the built-in type's storage key,
   * feed the authorizer and win discovery's preferred version).
   */
  setCustom(types: readonly CustomType[]): void {
    this.custom = Object.freeze(types.filter((t) => !this.isBuiltinGroup(t.group)));
    const taken = new Set(this.builtin.map((r) => gvrKey(r.group, r.version, r.resource)));
    const extra = this.custom.flatMap(customDefs).filter((d) => !taken.has(gvrKey(d.group, d.version, d.resource)));
    this.enabled = Object.freeze([...this.builtin, ...extra]);
    this.rebuild();
    this.generation++;
  }

  /** Whether a group is one of the server's own (enabled or not): never a custom resource's. */
  isBuiltinGroup(group: string): boolean {
    return this.all.some((r) => r.group === group);
  }

  /** The served custom resource types. */
  customTypes(): readonly CustomType[] {
    return this.custom;
  }

  /** The custom type stored under `<group>/<resource>`, or undefined. */
  customType(group: string, resource: string): CustomType | undefined {
    return this.custom.find((t) => t.group === group && t.plural === resource);
  }

  private rebuild(): void {
    this.byPath.clear();
    this.byKindKey.clear();
    this.byGroupVersion.clear();
    this.byGroup.clear();
    for (const r of this.enabled) this.index(r);
    this.groupList = Object.freeze(this.buildGroups(this.identity));
    for (const g of this.groupList) this.byGroup.set(g.name, g);
  }

  /** The enabled resource served at /<group>/<version>/<resource>, or undefined. */
  lookup(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.byPath.get(group)?.get(version)?.get(resource);
  }

  /** The enabled resource whose kind is `kind` in group/version, or undefined. */
  byKind(group: string, version: string, kind: string): ResourceDef | undefined {
    return this.byKindKey.get(gvrKey(group, version, kind));
  }

  /** Served groups in upstream discovery order, the core group ("") first. */
  groups(): readonly GroupVersions[] {
    return this.groupList;
  }

  /** One served group, or undefined when none of its versions is enabled. */
  group(name: string): GroupVersions | undefined {
    return this.byGroup.get(name);
  }

  /** Enabled resources of one group-version (empty when the group-version is not served). */
  resourcesFor(group: string, version: string): readonly ResourceDef[] {
    return this.byGroupVersion.get(gvKey(group, version)) ?? [];
  }

  /** Whether at least one resource of group/version is served. */
  isServed(group: string, version: string): boolean {
    return this.byGroupVersion.has(gvKey(group, version));
  }

  /** Every enabled resource, sorted by group, version, resource. */
  allEnabled(): readonly ResourceDef[] {
    return this.enabled;
  }

  /** Every known resource, enabled or not (group names in the configured domain). */
  allDefs(): readonly ResourceDef[] {
    return this.all;
  }

  private index(r: ResourceDef): void {
    let versions = this.byPath.get(r.group);
    if (!versions) this.byPath.set(r.group, (versions = new Map()));
    let resources = versions.get(r.version);
    if (!resources) versions.set(r.version, (resources = new Map()));
    resources.set(r.resource, r);
    const kindKey = gvrKey(r.group, r.version, r.kind);
    if (!this.byKindKey.has(kindKey)) this.byKindKey.set(kindKey, r);
    const gv = gvKey(r.group, r.version);
    const list = this.byGroupVersion.get(gv);
    if (list) list.push(r);
    else this.byGroupVersion.set(gv, [r]);
  }

  private buildGroups(identity: Identity): GroupVersions[] {
    const versions = new Map<string, string[]>();
    for (const gv of this.byGroupVersion.values()) {
      const { group, version } = gv[0]!;
      versions.set(group, [...(versions.get(group) ?? []), version]);
    }
    const order = GROUP_ORDER.map((g) => groupFor(identity, g));
    const position = (g: string): number => {
      const i = order.indexOf(g);
      return i < 0 ? order.length : i;
    };
    return [...versions.entries()]
      .sort(([a], [b]) => position(a) - position(b) || (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, vs]) => {
        const sorted = vs.sort(compareVersions);
        return { name, versions: sorted, preferredVersion: sorted[0]! };
      });
  }
}

/** Subresources served only while their feature gate is on (upstream registers them conditionally). */
const GATED_SUBRESOURCES: Readonly<Record<string, string>> = {
  '/pods/resize': 'InPlacePodVerticalScaling',
};

function withoutGated(r: ResourceDef, gates: Readonly<Record<string, boolean>>): ResourceDef {
  const off = (name: string) => {
    const gate = GATED_SUBRESOURCES[`${r.group}/${r.resource}/${name}`];
    return gate !== undefined && gates[gate] !== true;
  };
  return r.subresources.some((sub) => off(sub.name))
    ? { ...r, subresources: r.subresources.filter((sub) => !off(sub.name)) }
    : r;
}

function isEnabled(r: ResourceDef, o: Overrides): boolean {
  const explicit = o.resources.get(gvrKey(r.group, r.version, r.resource));
  if (explicit !== undefined) return explicit;
  return o.versions.get(gvKey(r.group, r.version)) ?? o.levels.get(r.stability) ?? o.all ?? r.stability === 'stable';
}

/** Parses `key[=value],...`; keys are validated against the known (renamed) resources. */
function parseRuntimeConfig(config: string, known: readonly ResourceDef[]): Overrides {
  const overrides: Overrides = { levels: new Map(), versions: new Map(), resources: new Map() };
  const entries = config
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? entry : entry.slice(0, eq);
    const raw = eq < 0 ? '' : entry.slice(eq + 1);
    const value = BOOLS[raw];
    if (value === undefined) fail(`invalid value "${raw}" for "${key}": must be true or false`);
    applyKey(overrides, key, value, known);
  }
  return overrides;
}

function applyKey(o: Overrides, key: string, value: boolean, known: readonly ResourceDef[]): void {
  if (key === 'api/all') o.all = value;
  else if (LEVEL_KEYS[key] !== undefined) o.levels.set(LEVEL_KEYS[key], value);
  else if (CORE_KEYS.has(key)) o.versions.set(gvKey('', 'v1'), value);
  else applyGroupKey(o, key, value, known);
}

/** `<group>/<version>` or `<group>/<version>/<resource>`; `api/v1/<resource>` names the core group. */
function applyGroupKey(o: Overrides, key: string, value: boolean, known: readonly ResourceDef[]): void {
  const parts = key.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p, i) => p === '' && i > 0)) fail(`invalid key "${key}"`);
  const group = parts[0] === 'api' || parts[0] === '' ? '' : parts[0]!;
  const [, version, resource] = parts as [string, string, string | undefined];
  if (!known.some((r) => r.group === group)) fail(`unknown group "${group}" in "${key}"`);
  if (!known.some((r) => r.group === group && r.version === version)) {
    fail(`unknown group version "${gvName(group, version)}" in "${key}"`);
  }
  if (resource === undefined) {
    o.versions.set(gvKey(group, version), value);
    return;
  }
  if (!known.some((r) => r.group === group && r.version === version && r.resource === resource)) {
    fail(`unknown resource "${resource}" in "${gvName(group, version)}"`);
  }
  o.resources.set(gvrKey(group, version, resource), value);
}

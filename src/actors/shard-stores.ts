/**
 * The per-type half of a shard actor (Shard, shard.ts, extends it): the registry, the store and
 * cache of each stored type (created on first use), the served custom types (setDefs) with the
 * loading and re-defaulting of their objects, and the leased objects of kinds with a TTL.
 */
import type { ActorConfig, CachedObject, DefsReply } from './protocol.js';
import { customVersion, type CustomType } from '../registry/crd/types.js';
import { customResourceStrategy } from '../registry/crd/cr-strategy.js';
import { compileCustomSchema } from '../registry/crd/structural.js';
import type { Defaulter } from '../registry/crd/schema-defaults.js';
import { defaulted, readDefaults, redefaultCache, storageSchemaChanged } from '../registry/crd/read-defaults.js';
import { registerColumns } from '../registry/crd/columns.js';
import type { Backend } from '../storage/interface.js';
import { TypeCache } from '../storage/cacher/type-cache.js';
import { Registry } from '../registry/registry.js';
import { makeIdentity, referenceGroup } from '../api/identity.js';
import { Store } from '../registry/store.js';
import { strategyFor } from '../registry/strategies/index.js';
import { DEFAULT_STRATEGY } from '../registry/strategy.js';
import { conversionFor } from '../registry/conversion.js';
import type { LeasedEntry } from './leases.js';
import { shardOf, typeKeyOf } from './routing.js';
import { cachedObject } from './pod-quota.js';
import { Transformers } from '../storage/encryption/transformer.js';
import { CorruptObjects } from './corrupt.js';
import { Converter } from '../registry/conversion/conversion.js';

export class ShardStores {
  protected readonly registry: Registry;
  /** set by Shard.init() */
  protected backend!: Backend;
  protected readonly caches = new Map<string, TypeCache>();
  protected readonly stores = new Map<string, Store>();
  /** the highest revision stored at start: history (and so watch replay) begins there */
  protected floor = 0;
  /** encryption at rest per stored type (identity when not configured) */
  protected readonly transformers: Transformers;
  /** stored values that could not be decrypted or decoded at load */
  readonly corrupt = new CorruptObjects();
  protected readonly converter: Converter;

  constructor(protected readonly cfg: ActorConfig) {
    this.registry = new Registry(makeIdentity(cfg.apiDomain), cfg.runtimeConfig);
    this.transformers = new Transformers(cfg.encryption);
    this.converter = new Converter(this.registry.identity.domain);
  }

  /**
   * The served custom resource types changed: stores of custom types are rebuilt (schemas may
   * have changed), caches of types no longer served are dropped, and the stored objects of
   * newly served types this shard owns are loaded (after a restart they are already stored).
   */
  async setDefs(types: CustomType[]): Promise<DefsReply> {
    const before = new Map(this.registry.customTypes().map((t) => [typeKeyOf(t.group, t.plural), t]));
    const previous = this.registry.customTypes();
    this.registry.setCustom(types);
    registerColumns(types, previous);
    for (const [id, s] of this.stores) if (s.ctx.def.custom) this.stores.delete(id);
    const served = new Set<string>();
    const objects: CachedObject[] = [];
    for (const t of types) {
      const typeKey = typeKeyOf(t.group, t.plural);
      served.add(typeKey);
      const defaults = readDefaults(t);
      this.converter.setCustomStorage(typeKey, `${t.group}/${t.storageVersion}`, defaults);
      const cache = this.caches.get(typeKey);
      if (cache && before.has(typeKey) && storageSchemaChanged(before.get(typeKey), t))
        this.redefault(typeKey, cache, defaults[`${t.group}/${t.storageVersion}`], objects);
    }
    for (const typeKey of before.keys()) {
      if (served.has(typeKey)) continue;
      this.caches.delete(typeKey);
      this.converter.setCustomStorage(typeKey, undefined);
    }
    for (const typeKey of served) {
      if (before.has(typeKey) || this.caches.has(typeKey) || shardOf(typeKey, this.cfg.shards) !== this.cfg.shard)
        continue;
      const store = this.storeForKey(typeKey);
      if (store) await this.loadType(typeKey, store, objects);
    }
    return { objects };
  }

  /** Defaults on read: the cached objects re-defaulted (read-defaults.ts) also go to the front thread's read cache. */
  private redefault(typeKey: string, cache: TypeCache, defaults: Defaulter | undefined, objects: CachedObject[]): void {
    const store = defaults && this.storeForKey(typeKey);
    for (const e of store ? redefaultCache(cache, store, defaults) : []) objects.push(cachedObject(typeKey, e));
  }

  /** Loads the stored objects of one type (a custom type newly served) into its cache. */
  private async loadType(typeKey: string, store: Store, objects: CachedObject[]): Promise<void> {
    const defaults = this.storageDefaults(typeKey);
    for await (const page of this.backend.range(typeKey + '/'))
      for (const { key, value } of page) {
        try {
          const json = this.transformers.forType(typeKey).read(key, value);
          const entry = store.entryOf(defaulted(json, defaults) ?? JSON.parse(json));
          store.ctx.cache.load(entry);
          objects.push(cachedObject(typeKey, entry));
        } catch (e) {
          this.corrupt.add(key, (e as Error).message);
        }
      }
  }

  /** The storage version's defaulter of a custom type, if it has defaults. */
  private storageDefaults(typeKey: string): Defaulter | undefined {
    const t = this.registry.customTypes().find((c) => typeKeyOf(c.group, c.plural) === typeKey);
    return t && readDefaults(t)[`${t.group}/${t.storageVersion}`];
  }

  /** Every cached object of a kind with a TTL, with that TTL (their leases). */
  protected *leased(): Generator<LeasedEntry> {
    for (const [typeKey, cache] of this.caches) {
      const store = this.storeForKey(typeKey);
      // kinds without a TTL (all but Events) are skipped whole: asking would parse every cached object
      if (!store || store.ctx.strategy.ttl === DEFAULT_STRATEGY.ttl) continue;
      for (const [, e] of cache.scan('', undefined)) {
        const ttl = store.ctx.strategy.ttl(e.obj, this.cfg.strategyConfig);
        if (ttl > 0) yield [typeKey, e, ttl];
      }
    }
  }

  /** The store for a stored type key, created on first use with any served version. */
  protected storeForKey(typeKey: string): Store | undefined {
    const s = this.stores.get(typeKey);
    if (s) return s;
    const [group, resource] = typeKey.split('/') as [string, string];
    const def =
      this.registry.allEnabled().find((d) => d.group === group && d.resource === resource) ??
      this.registry.allDefs().find((d) => d.group === group && d.resource === resource);
    if (!def) return undefined;
    return this.storeFor(def.group, def.version, def.resource);
  }

  protected storeFor(group: string, version: string, resource: string): Store | undefined {
    const def = this.registry.lookup(group, version, resource);
    if (!def) return undefined;
    const typeKey = typeKeyOf(group, resource);
    const id = `${group}/${resource}/${version}`;
    let s = this.stores.get(id);
    if (!s) {
      let cache = this.caches.get(typeKey);
      if (!cache) {
        this.caches.set(typeKey, (cache = new TypeCache(this.cfg.historyWindowMs)));
        cache.setFloor(this.floor);
      }
      const refGroup = referenceGroup(this.registry.identity, group);
      const conversion = def.custom ? undefined : conversionFor(refGroup, version, resource);
      const custom = def.custom ? this.registry.customType(group, resource) : undefined;
      const cv = custom && customVersion(custom, version);
      const strategy = custom && cv ? customResourceStrategy(custom, cv) : strategyFor(refGroup, resource);
      const schema = cv ? compileCustomSchema(cv.schema) : undefined;
      const selectableFields =
        custom && cv
          ? {
              served: cv.selectableFields,
              stored: customVersion(custom, custom.storageVersion)?.selectableFields ?? [],
            }
          : undefined;
      s = new Store({
        def,
        typeKey,
        cache,
        strategy,
        continueTtlMs: this.cfg.continueTtlMs,
        config: this.cfg.strategyConfig,
        conversion,
        referenceGroup: refGroup,
        converter: this.converter,
        ...(schema ? { schema } : {}),
        ...(selectableFields ? { selectableFields } : {}),
      });
      this.stores.set(id, s);
      // the type's own store (loading, leases) is one that stores its objects as they are
      if (!conversion && !this.stores.has(typeKey)) this.stores.set(typeKey, s);
    }
    return s;
  }
}

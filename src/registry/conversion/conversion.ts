/**
 * Version conversion of stored objects: a multi-version resource is stored once, in its
 * storage version, and converted on every read and write through another served version.
 * Pure functions over plain objects: the shard actors (stores, watch replay) and the front
 * thread (live watch fan-out) use the same code. Types without a converter keep the old rule
 * (same schema in every version: only apiVersion changes).
 */
import { hpaV1ToV2, hpaV2ToV1 } from './hpa.js';
import { defaultHpaV2 } from './hpa-defaults.js';
import { readDefaults } from '../crd/read-defaults.js';
import type { CustomType } from '../crd/types.js';
import type { KubeObject } from '../../api/object.js';

/** An object being converted: plain JSON whose apiVersion names its version. */
type Obj = KubeObject;

/**
 * One version's conversion into another. CONVERSIONS pairs it with the type key of the objects
 * it takes, so it may declare their kind's shape: a method signature, compared bivariantly.
 */
interface ConvertFn {
  convert(o: Obj, domain: string): Obj;
}

interface TypeConversion {
  /** the apiVersion objects are stored in */
  storage: string;
  /** from → to → convert: a fresh object; metadata and kind go over as they are */
  convert: Record<string, Record<string, ConvertFn['convert']>>;
  /** the storage version's defaults (upstream defaults on every decode), in place: run on every stored form */
  defaults?: <T extends Obj>(o: T) => T;
}

/** By stored type key (`<group>/<resource>`, group as served). */
const CONVERSIONS: Record<string, TypeConversion> = {
  'autoscaling/horizontalpodautoscalers': {
    storage: 'autoscaling/v2',
    convert: { 'autoscaling/v1': { 'autoscaling/v2': hpaV1ToV2 }, 'autoscaling/v2': { 'autoscaling/v1': hpaV2ToV1 } },
    defaults: defaultHpaV2,
  },
};

export class Converter {
  /** custom resources (CRDs, conversion strategy None): the storage apiVersion per type key */
  private readonly custom = new Map<string, string>();

  /** the custom type each follows (lookup mode): re-read when the registry serves another generation of it */
  private readonly followed = new Map<string, CustomType | undefined>();

  /**
   * lookup: the served custom type of a type key, for a converter that follows the registry
   * itself (the front thread's watch fan-out) instead of being told (setCustomStorage).
   */
  constructor(
    private readonly domain: string,
    private readonly lookup?: (typeKey: string) => CustomType | undefined,
  ) {}

  /** In lookup mode, the type's storage version and defaults as the registry now serves them. */
  private follow(typeKey: string): void {
    if (!this.lookup) return;
    const t = this.lookup(typeKey);
    if (this.followed.has(typeKey) && this.followed.get(typeKey) === t) return;
    this.followed.set(typeKey, t);
    this.setCustomStorage(typeKey, t && `${t.group}/${t.storageVersion}`, t ? readDefaults(t) : {});
  }

  /** custom resources: the defaults of each version that has some, applied on conversion into it (defaults on read) */
  private readonly customDefaults = new Map<string, Record<string, (o: Obj) => void>>();

  /** A custom resource type's storage apiVersion (undefined: the type is gone) and its versions' defaults. */
  setCustomStorage(
    typeKey: string,
    apiVersion: string | undefined,
    defaults: Record<string, (o: Obj) => void> = {},
  ): void {
    if (apiVersion) this.custom.set(typeKey, apiVersion);
    else this.custom.delete(typeKey);
    if (apiVersion && Object.keys(defaults).length) this.customDefaults.set(typeKey, defaults);
    else this.customDefaults.delete(typeKey);
  }

  /** The storage apiVersion of a type with a converter, else undefined (any version is stored as written). */
  storageVersion(typeKey: string): string | undefined {
    return CONVERSIONS[typeKey]?.storage ?? this.custom.get(typeKey);
  }

  /** obj as apiVersion (obj itself when it already is; never changes obj). */
  convert<T extends Obj>(typeKey: string, obj: T, apiVersion: string): T {
    if (obj.apiVersion === apiVersion) return obj;
    this.follow(typeKey);
    const f = CONVERSIONS[typeKey]?.convert[obj.apiVersion ?? '']?.[apiVersion];
    // a conversion copies metadata and kind: the result is the same kind of object (T: e.g. Stored)
    if (f) return f(obj, this.domain) as T;
    const defaults = this.customDefaults.get(typeKey)?.[apiVersion];
    if (!defaults) return { ...obj, apiVersion };
    // a deep copy: the defaults fill nested objects of the cached (shared) stored form
    const copy = { ...structuredClone(obj), apiVersion };
    defaults(copy);
    return copy;
  }

  /** The JSON of an object (given with its JSON) as apiVersion. */
  json(typeKey: string, obj: Obj, json: string, apiVersion: string): string {
    return obj.apiVersion === apiVersion ? json : JSON.stringify(this.convert(typeKey, obj, apiVersion));
  }

  /** Any object JSON as apiVersion (the live watch fan-out: events carry the stored form). */
  jsonAs(typeKey: string, json: string, apiVersion: string): string {
    const obj: Obj = JSON.parse(json);
    return obj.apiVersion === apiVersion ? json : JSON.stringify(this.convert(typeKey, obj, apiVersion));
  }

  /** The stored form of an object written through any version. */
  toStorage<T extends Obj>(typeKey: string, obj: T): T {
    const storage = this.storageVersion(typeKey);
    if (!storage) return obj;
    const stored = this.convert(typeKey, obj, storage);
    const defaults = CONVERSIONS[typeKey]?.defaults;
    // a converted object is a fresh copy; one written in the storage version was defaulted already
    return defaults && stored !== obj ? defaults(stored) : stored;
  }
}

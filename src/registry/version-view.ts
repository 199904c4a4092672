/**
 * How one served version of a type sees the type's cached entries: the entries hold the stored
 * form; a store of another version reads converted copies and writes through toStorage. Two
 * kinds of conversion exist: a `Conversion` for a version served over another resource's
 * storage (events.<domain>/v1 over core Events, conversion.ts) and the `Converter` of types
 * served in several versions of one group (HorizontalPodAutoscaler, conversion/conversion.ts);
 * other versions only restamp apiVersion.
 */
import type { Stored } from '../api/object.js';
import type { Entry } from '../storage/cacher/type-cache.js';
import type { Conversion } from './conversion.js';
import type { Converter } from './conversion/conversion.js';
import { stringifyValue } from '../schema/deep-value.js';

export class VersionView {
  constructor(
    private readonly converter: Converter | undefined,
    private readonly typeKey: string,
    private readonly apiVersion: string,
    private readonly conversion?: Conversion,
  ) {}

  /** The stored form of an object written through this version (itself when already stored so). */
  toStorage(obj: Stored): Stored {
    if (this.conversion)
      return obj.apiVersion === this.conversion.storageVersion ? obj : this.conversion.toStorage(obj);
    return this.converter ? this.converter.toStorage(this.typeKey, obj) : obj;
  }

  /** obj as this version (obj itself when it already is). */
  asServed(obj: Stored): Stored {
    if (obj.apiVersion === this.apiVersion) return obj;
    if (this.conversion) return this.conversion.fromStorage(obj, this.apiVersion);
    return this.converter
      ? this.converter.convert(this.typeKey, obj, this.apiVersion)
      : { ...obj, apiVersion: this.apiVersion };
  }

  /** The JSON of a cached entry as this version. */
  jsonOf(e: Entry): string {
    return e.apiVersion === this.apiVersion ? e.json : stringifyValue(this.asServed(e.obj));
  }

  /** A cached entry as this version: itself, or a converted copy. */
  entry(e: Entry): Entry;
  entry(e: Entry | undefined): Entry | undefined;
  entry(e: Entry | undefined): Entry | undefined {
    if (!e || e.apiVersion === this.apiVersion) return e;
    const obj = this.asServed(e.obj);
    // the copy's encodings are its own: none of the stored form's (encoded, jsonBytes, metaJson) follow it
    const { namespace, name, rv, labels, fields } = e;
    return { namespace, name, rv, obj, json: stringifyValue(obj), apiVersion: obj.apiVersion ?? '', labels, fields };
  }
}

/**
 * How one served version of a type sees the type's cached entries: the entries hold the stored
 * form (the storage version for types with a converter); a store of another version reads
 * converted copies and writes through toStorage (see conversion/conversion.ts).
 */
import type { Entry } from '../storage/cacher/type-cache.js';
import type { Converter } from './conversion/conversion.js';

export class VersionView {
  constructor(private readonly converter: Converter | undefined, private readonly typeKey: string, private readonly apiVersion: string) {}

  /** The stored form of an object written through this version. */
  toStorage(obj: any): any {
    return this.converter ? this.converter.toStorage(this.typeKey, obj) : obj;
  }

  /** obj as this version (obj itself when it already is). */
  asServed(obj: any): any {
    if (obj.apiVersion === this.apiVersion) return obj;
    return this.converter ? this.converter.convert(this.typeKey, obj, this.apiVersion) : { ...obj, apiVersion: this.apiVersion };
  }

  /** The JSON of a cached entry as this version. */
  jsonOf(e: Entry): string {
    return e.obj.apiVersion === this.apiVersion ? e.json : JSON.stringify(this.asServed(e.obj));
  }

  /** A cached entry as this version: itself, or a converted copy. */
  entry(e: Entry | undefined): Entry | undefined {
    if (!e || e.obj.apiVersion === this.apiVersion) return e;
    const obj = this.asServed(e.obj);
    return { ...e, obj, json: JSON.stringify(obj) };
  }
}

/**
 * The body of a streamed LIST's page (src/handlers/list-stream.ts), built from the entries' JSON
 * or cached item bytes: selection plus one copy of each item into a buffer of its own, handed to
 * the front thread without a copy. JSON: the page's items comma-joined (the front writes the
 * list's head, the commas between pages and the tail). Protobuf: the page's `items` fields; the
 * first page opens the envelope, whose length counts every item of the snapshot, so it sizes
 * them all first (their bytes are cached on the entries for the pages that follow); the front
 * writes the envelope's close after the last page and checks the total against `size`.
 */
import {
  joinFields,
  joinJson,
  protobufFieldsSize,
  protobufItems,
  protobufListClose,
  protobufListOpening,
} from '../codec/codec.js';
import type { Encoding } from '../codec/types.js';
import type { Entry } from '../storage/cacher/type-cache.js';

export interface PageBody {
  body: Uint8Array /** Protobuf first page: the whole body's length */;
  size?: number;
}

export interface ListHead {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string };
}

const EMPTY = new Uint8Array(0);

/**
 * items: the page's entries as this version; head: the list's head; all: on the first page
 * only, every entry of the snapshot the pages will hold (as this version).
 */
export function pageBody(items: Entry[], enc: Encoding, head: ListHead, all?: () => Iterable<Entry>): PageBody {
  if (enc.format !== 'protobuf') return { body: joinJson('', items, undefined, '') };
  const bytes = protobufItems(items, head.apiVersion);
  const fieldsSize = all ? protobufFieldsSize(all(), head.apiVersion) : 0;
  const { open, tag } = protobufListOpening(head, fieldsSize);
  if (!all) return { body: joinFields(EMPTY, tag, bytes, EMPTY) };
  return {
    body: joinFields(open, tag, bytes, EMPTY),
    size: open.byteLength + fieldsSize + protobufListClose.byteLength,
  };
}

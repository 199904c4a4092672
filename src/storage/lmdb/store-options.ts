/**
 * The options every opener of a shard's LMDB environment uses (the backend, migrate, reshard):
 * values are read and written the same way whoever opens the store.
 */
import type { RootDatabaseOptionsWithPath } from 'lmdb';
import { DICTIONARY } from './dictionary.js';

/**
 * The map's initial size (address space, not disk: without a write map the file grows with its
 * pages only). lmdb-js grows a full map by mapping the file again and keeps every earlier map
 * for lingering readers, never unmapping it, so each page resident in an old map stays counted
 * in RSS besides its copy in the new one: growing from lmdb-js' 128 KiB start to a 150,000-Pod
 * store left ten maps and ~0.8 KB per Pod resident twice. One map this size is never regrown
 * below 64 GiB of data (beyond, lmdb-js still grows it).
 */
export const MAP_SIZE = 64 * 2 ** 30;

/**
 * Values this long or longer are stored LZ4-compressed against DICTIONARY. The reason is the
 * page, not the disk: LMDB keeps a value inline in its B-tree leaf only up to about half a page
 * (≈ 2,000 bytes with the key), and a longer one takes an overflow page of its own, 4 KiB for a
 * 2.1 KB Pod, which stays resident in the map once touched. Compressed, a Pod fits inline with
 * others in one leaf. Shorter values are stored as they are (little to gain, some CPU).
 *
 * The price is CPU. lmdb-js compresses each value in a libuv work item of its own, queued by the
 * put on the shard actor's thread, and LZ4 re-hashes the dictionary per value (≈ 26 µs of
 * process CPU per 1.4 KB value, a fifth of a create's server CPU): so LmdbBackend.commit
 * compresses its values itself, in the same format against the same dictionary
 * (src/storage/lmdb/lz4-dict.ts, ≈ 4 µs on the calling thread), and lmdb-js's compression is left
 * to the other openers (migrate, reshard) and to reads. The 512 bytes stay for memory:
 * uncompressed, a 512–1,535 B value keeps to its leaf but fills it, and a 1.4 KB ConfigMap then
 * costs 2.8–3.8 KB of pages instead of 0.4 (docs/benchmarks.md, "Creates, seventh round", where
 * 1,536 was measured and reverted; "Creates, eighth round" for the compression moved).
 *
 * Compatible both ways with the values of earlier builds: lmdb-js marks a compressed value by a
 * first byte ≥ 250 (254/255 and its length), which no JSON text or revision number starts with,
 * so uncompressed values written before are read back as they are.
 */
export const COMPRESSION_THRESHOLD = 512;

/** The options to open the environment at path with (string keys and string values). */
export function storeOptions(path: string): RootDatabaseOptionsWithPath {
  return {
    path,
    // encoding 'string': values are already-encoded JSON; no msgpack round trip.
    encoding: 'string',
    compression: { threshold: COMPRESSION_THRESHOLD, dictionary: DICTIONARY },
    mapSize: MAP_SIZE,
  };
}

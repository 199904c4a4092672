/**
 * A watch in a version other than a webhook-converting CRD's storage version: the hub streams
 * the storage version's events (plain JSON) into this sink, which converts each batch of
 * events (the initial events in one ConversionReview, then each delivery) and writes them to
 * the client's stream in the requested version and encoding (a Table view prints the
 * requested version's columns), in order. A conversion that fails ends the stream with an
 * ERROR event carrying the 500 Status, as upstream's watcher does with an object it cannot
 * decode (etcd3 watcher transformErrorToEvent).
 */
import { errors, type Status } from '../api/status.js';
import type { Encoding } from '../codec/types.js';
import type { WatchSink } from '../http/watch-hub.js';
import {
  bookmarkObject,
  encodeEventObject,
  encodeValue,
  frameEvent,
  joinChunks,
  type Chunk,
} from '../codec/watch-encoding.js';
import { isObj, type Obj } from './conversion-review.js';

interface WatchEvent {
  type: string;
  object: Obj;
}

export interface ConvertingTarget {
  /** the requested apiVersion and the kind */
  apiVersion: string;
  kind: string;
  /** the client's stream encoding */
  enc: Encoding;
  /** objects converted to apiVersion; throws what `failure` renders */
  convert(objects: Obj[]): Promise<Obj[]>;
  failure(e: unknown): Status;
}

export class ConvertingSink implements WatchSink {
  private chain: Promise<void> = Promise.resolve();
  /** text received and not yet written to the client */
  private queued = 0;
  /** what the client's stream reported holding at the last write */
  private held = 0;
  private ended = false;
  /** a Table view: only the first event carries the column definitions */
  private headersSent = false;

  constructor(
    private readonly out: WatchSink,
    private readonly t: ConvertingTarget,
  ) {}

  write(chunk: Chunk): number {
    if (this.ended) return 0;
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (!text.trim()) return this.queued + this.held;
    this.queued += text.length;
    this.chain = this.chain
      .then(() => this.deliver(text))
      .finally(() => {
        this.queued -= text.length;
      });
    return this.queued + this.held;
  }

  close(): void {
    this.chain = this.chain.then(() => this.end());
  }

  abort(): void {
    this.ended = true;
    this.out.abort();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.out.close();
  }

  /** One chunk of JSON events (one per line) converted and written, or the stream ended with an ERROR. */
  private async deliver(text: string): Promise<void> {
    if (this.ended) return;
    const events = text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as WatchEvent);
    const carried = events.filter((e) => e.type !== 'BOOKMARK' && e.type !== 'ERROR');
    let converted: Obj[];
    try {
      converted = await this.t.convert(carried.map((e) => e.object));
    } catch (e) {
      if (this.ended) return;
      this.out.write(
        frameEvent(
          this.t.enc,
          'ERROR',
          encodeValue(this.t.enc, { ...this.t.failure(e), kind: 'Status', apiVersion: 'v1' }),
        ),
      );
      return this.end();
    }
    if (this.ended) return;
    let next = 0;
    const chunks = events.map((e) =>
      e.type === 'BOOKMARK' || e.type === 'ERROR' ? this.passed(e) : this.encoded(e.type, converted[next++]!),
    );
    this.held = this.out.write(joinChunks(chunks));
  }

  private encoded(type: string, obj: Obj): Chunk {
    const { enc, apiVersion, kind } = this.t;
    const object = encodeEventObject(
      enc,
      { kind: `${apiVersion}/${kind}`, json: JSON.stringify(obj), obj },
      Date.now(),
      !this.headersSent,
    );
    this.headersSent = true;
    return frameEvent(enc, type, object);
  }

  /** A bookmark names the requested version; an error passes as it is. */
  private passed(e: WatchEvent): Chunk {
    const { enc, apiVersion, kind } = this.t;
    if (e.type === 'ERROR') return frameEvent(enc, 'ERROR', encodeValue(enc, e.object));
    const meta = isObj(e.object.metadata) ? e.object.metadata : {};
    const annotations = isObj(meta.annotations) ? (meta.annotations as Record<string, string>) : undefined;
    return frameEvent(
      enc,
      'BOOKMARK',
      encodeValue(enc, bookmarkObject(enc.view, kind, apiVersion, Number(meta.resourceVersion), annotations)),
    );
  }
}

/** The Status of a watch whose objects could not be converted (upstream: an internal error). */
export function watchConversionStatus(message: string): Status {
  return errors.internal(message).status;
}

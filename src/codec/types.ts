/** Plain data shared by the codec and the thread protocol (src/actors/protocol.ts re-exports it). */

/** How the actor should encode the response body. */
export interface Encoding {
  format: 'json' | 'yaml' | 'protobuf' | 'cbor';
  pretty: boolean;
  /** the Protobuf media type of the configured identity (format protobuf only) */
  mediaType?: string;
  /** render a server-side view instead of the object or list (Accept `as=`) */
  view?: {
    as: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';
    groupVersion: string;
    includeObject: 'None' | 'Metadata' | 'Object';
  };
  /** the client accepts gzip and the APIResponseCompression gate is on */
  gzip?: boolean;
}

export interface Body {
  text: string;
  contentType: 'json' | 'yaml' | 'protobuf' | 'cbor';
  bytes?: Uint8Array;
}

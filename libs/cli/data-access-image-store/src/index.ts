/** The local OCI image store in the CLI cache. */
export { LocalImageStore, IMAGE_STORE_DIR, type BlobState, type WrittenBlob } from './image-store';
/** The error raised for stored bytes that do not match their digest. */
export { CorruptBlobError, isCorruptBlob } from './errors';

/** The narrow object-store ports desired state reads and writes through. */
export * from './desired-state.port';
/** Reading the index: get, conditional get, absent vs empty, and the publication fence. */
export * from './index-store';
/** Reading verified, strictly parsed payloads and writing them create-only. */
export * from './payload-store';
/** The compare-and-swap update loop of the index. */
export * from './update-index';
/** Reading many payloads: one read per digest, bounded concurrency, a verified-payload cache. */
export * from './payload-reader';
/** The verified-payload cache in a directory, bounded in size. */
export * from './directory-payload-cache';

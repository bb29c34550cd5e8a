/** Media type constants and classifiers. */
export * from './media-types';
/** `sha256:` / `sha512:` digests: validate, parse, compute, stream. */
export * from './digest';
/** Descriptors and platforms. */
export { type Descriptor, type Platform, formatPlatform, parsePlatform } from './descriptor';
/** Image indexes and manifests with strict parsers. */
export * from './manifest';
/** Image configuration with a strict parser. */
export * from './image-config';
/** Image references, Docker Hub defaults and cluster normalisation. */
export * from './reference';
/** OCI image-layout files and the tag-merging index update. */
export * from './layout';
/** Deterministic JSON for stored or hashed documents. */
export * from './canonical-json';
/** Strict, bounded JSON parsing. */
export * from './strict-json';
/** The error raised for malformed OCI content. */
export * from './errors';

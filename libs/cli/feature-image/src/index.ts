/** `podmin build`: package a Containerfile's files and config into an OCI image index. */
export {
  buildImage,
  hostPlatform,
  platformMatches,
  type BuildOptions,
  type BuildResult,
} from './build/build-image';
/** `podmin pull`: import a complete remote image into the local store. */
export { pullImage, type PulledImage } from './pull';
/** `podmin push`: publish a stored image to the cluster bucket. */
export { pushImage, type PushOptions } from './push';
/** Publication of a stored image into a bucket OCI layout, shared by push and the mirror. */
export { MAX_PUSH_BLOB_BYTES, type ImageBucket, type IndexMergeOptions } from './bucket-layout';
/** The dependency-image mirror behind setup's `ImageMirror` port and `podmin fetch`. */
export {
  DependencyImageMirror,
  uniqueContentSize,
  type DependencyImageMirrorOptions,
} from './mirror';
/** Source resolution shared by build, pull and push. */
export { ensureImage, buildTagReference, type StoredImage } from './source';
/** Dependencies of the image commands and the image graph reader. */
export { readImageGraph, type ImageDeps, type ImageGraph, type ImageReporter } from './image-deps';
/** The registry v2 pull client with anonymous bearer-token auth. */
export {
  RegistryClient,
  isLoopbackHost,
  parseBearerChallenge,
  type FetchFunction,
  type RegistryClientOptions,
} from './registry/registry-client';
/** The Containerfile parser and evaluator. */
export {
  parseContainerfile,
  SUPPORTED_INSTRUCTIONS,
  type Instruction,
  type ParsedContainerfile,
} from './containerfile/parser';
/** Containerfile errors carry the file and line. */
export { ContainerfileError } from './containerfile/errors';
/** Deterministic layer writing. */
export {
  writeLayer,
  LAYER_GZIP_HEADER,
  LAYER_GZIP_LEVEL,
  type LayerEntry,
  type WrittenLayer,
} from './build/layer';

/** Bounded HTTP reads used by the resolver. */
export { type FetchFunction } from './http';
/** The upstream resolver. */
export { DependencyResolver, type AgentArtifact, type DependencyResolverOptions } from './resolver';
/** The resolver's injectable endpoints. */
export {
  DEFAULT_RELEASE_ENDPOINTS,
  releaseEndpointsUnder,
  type ReleaseEndpoints,
} from './release-endpoints';
/** The verified download cache under `<cache>/downloads`. */
export {
  DownloadCache,
  type CachedFile,
  type DownloadCacheOptions,
  type ProgressSink,
} from './download-cache';
/** Bucket sync: manifest read with ETag, pending uploads, CAS commit, retention. */
export {
  syncDependencies,
  readDependencyManifest,
  type ImageMirror,
  type PublishedManifest,
  type SyncDependenciesOptions,
  type SyncReporter,
  type SyncResult,
} from './sync';
/** `--agent-source`: build and record the agent bundle from a checkout. */
export { buildAgentFromSource, AGENT_ARTIFACT_DIR } from './agent-source';
/** The jool-builds module archive check run before a Jool archive is mirrored. */
export { verifyJoolArchive } from './jool-archive';

import type { Reporter } from '@podmin/cli-util-io';
import type { IndexSigning } from '@podmin/data-access-desired-state';
import type { SecretStore } from '@podmin/data-access-secrets';

/** The one secret-store call an install makes: existence from metadata, never the value. */
export type TokenSecretStore = Pick<SecretStore, 'provider' | 'exists'>;

/** A pinned upstream image and where the bucket mirrors it. */
export interface MirroredImage {
  /** Upstream reference with the pinned tag, e.g. `docker.io/cloudflare/cloudflared:2026.8.2`. */
  source: string;
  /** The pinned tag. */
  version: string;
  /** `mirror/<upstream-registry>/<repository>`. */
  path: string;
  /** The pinned digest of the upstream multi-platform index. */
  digest: string;
}

/** Publishes a pinned image into the bucket's `mirror/` layout (the dependency-image mirror). */
export interface PinnedImageMirror {
  /**
   * `present` when the mirror index already tags `image.digest` with its nested manifests
   * (nothing written, upstream not asked), `repaired` when only nested descriptors were missing,
   * `uploaded` after pulling exactly `image.digest` (bytes verified against it) and publishing.
   */
  ensureMirrored(image: MirroredImage): Promise<'present' | 'repaired' | 'uploaded'>;
}

/** One deployment's canonical Pod payload, as the normal deploy path commits it. */
export interface InstallPayloads {
  name: string;
  nodegroup: string;
  podYaml: string;
}

/**
 * Commits a deployment through the content-addressed deploy path (payloads, then index CAS),
 * signing the index write with `options.signing` when given.
 */
export type DeploymentCommitter = (
  payloads: InstallPayloads,
  options: { signing?: IndexSigning },
) => Promise<{ key: string; changed: boolean }>;

/** What `podmin install` needs from the CLI shell. */
export interface InstallDeps {
  reporter: Pick<Reporter, 'info'>;
  /** The current context's cluster name (the first segment of every secret name). */
  cluster: string;
  /** The secrets provider the token must be in (the context's, or `--provider`'s). */
  secrets: TokenSecretStore;
  mirror: PinnedImageMirror;
  commit: DeploymentCommitter;
}

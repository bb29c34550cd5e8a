import type { CliContext } from '../cli-context';

/**
 * Loads the image feature (lazily, as every handler loads its implementation) with what build,
 * pull, push and fetch's image mirror work with: the local OCI store in the CLI's cache, a
 * registry client (over HTTP with `plainHttp`) and the reporter; and the reference formatter.
 */
export async function loadImageFeature(ctx: CliContext, options: { plainHttp?: boolean } = {}) {
  const lib = await import('@podmin/cli-feature-image');
  const { LocalImageStore } = await import('@podmin/cli-data-access-image-store');
  const { formatReference } = await import('@podmin/util-oci');
  return {
    lib,
    formatReference,
    deps: {
      store: LocalImageStore.inCache(ctx.dirs.cache),
      registry: new lib.RegistryClient(options),
      reporter: ctx.reporter,
    },
  };
}

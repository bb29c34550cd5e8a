import { CLOUDFLARED_IMAGE, type PinnedImage } from '@podmin/util-dependencies';
import { PodminError, ValidationError } from '@podmin/util-errors';
import {
  DNS1123_LABEL_RULE,
  buildDeployment,
  isDns1123Label,
  type Deployment,
} from '@podmin/util-manifest';
import {
  CLOUDFLARED_NAME,
  CLOUDFLARED_NAMESPACE,
  TUNNEL_TOKEN_KEY,
  cloudflaredDaemonSet,
  mirroredImage,
  tunnelTokenSecretName,
} from './cloudflared';
import type { IndexSigning } from '@podmin/data-access-desired-state';
import type { InstallDeps } from './install.ports';

/** The components `podmin install` knows: deliberately one, not a package framework. */
export const INSTALLABLE_COMPONENTS: readonly string[] = Object.freeze([CLOUDFLARED_NAME]);

/** What `podmin install` was asked for. */
export interface InstallOptions {
  component: string;
  nodegroup: string;
  /** The pin to install; the catalog's real pin unless a test serves a stand-in. */
  image?: PinnedImage;
  /** Signs the index write as a trusted deployer; without it the index is written unsigned. */
  signing?: IndexSigning;
}

/** What an install did. */
export interface InstallResult {
  /** The desired-state index key, `<nodegroup>/cloudflared`. */
  key: string;
  /** False when the index already held exactly this deployment (nothing written). */
  changed: boolean;
  /** What the mirror did with the pinned image. */
  mirror: 'present' | 'repaired' | 'uploaded';
  /** The Pod's image reference (the cluster mirror, by digest). */
  image: string;
  /** The validated deployment that was committed. */
  deployment: Deployment;
}

/**
 * Refuses an unknown component (naming the one that exists) and a NodeGroup name deploy would
 * refuse; pure, so the CLI calls it before opening the bucket or a secret store.
 */
export function checkInstallRequest(
  options: Pick<InstallOptions, 'component' | 'nodegroup'>,
): void {
  if (!INSTALLABLE_COMPONENTS.includes(options.component)) {
    throw new PodminError(
      'INVALID_ARGUMENT',
      `installing ${JSON.stringify(options.component)}: not a built-in component; podmin installs only ${INSTALLABLE_COMPONENTS.join(', ')}`,
      { hint: `run \`podmin install ${CLOUDFLARED_NAME} --nodegroup <nodegroup>\`` },
    );
  }
  if (!isDns1123Label(options.nodegroup)) {
    throw new ValidationError(
      `installing ${CLOUDFLARED_NAME}`,
      [
        {
          field: '--nodegroup',
          message: `"${options.nodegroup}" is invalid; it must be ${DNS1123_LABEL_RULE}`,
        },
      ],
      { code: 'INVALID_ARGUMENT' },
    );
  }
}

/**
 * `podmin install <component> --nodegroup NG`: checks the component and NodeGroup, renders and
 * validates the hardened cloudflared Pod, checks that its tunnel token exists (metadata only)
 * — all before anything is written — then mirrors the pinned image into `mirror/` when its
 * digest is absent and commits the Pod through the normal deploy path. Re-running writes
 * nothing: the mirror is `present` and the index entry is unchanged.
 */
export async function installComponent(
  deps: InstallDeps,
  options: InstallOptions,
): Promise<InstallResult> {
  checkInstallRequest(options);
  const image = options.image ?? CLOUDFLARED_IMAGE;
  const provider = deps.secrets.provider;
  const deployment = buildDeployment(
    cloudflaredDaemonSet({ nodegroup: options.nodegroup, provider, image }),
    {
      source: `the ${CLOUDFLARED_NAME} install`,
      name: CLOUDFLARED_NAME,
      nodegroup: options.nodegroup,
    },
  );

  const token = tunnelTokenSecretName(deps.cluster);
  if (!(await deps.secrets.exists(token))) {
    throw new PodminError(
      'NOT_FOUND',
      `installing ${CLOUDFLARED_NAME}: the tunnel token ${token} does not exist in ${provider}; nothing was written`,
      {
        hint: `create it, then install again: podmin secret create ${TUNNEL_TOKEN_KEY} --for ${CLOUDFLARED_NAME} -n ${CLOUDFLARED_NAMESPACE} --provider ${provider}`,
      },
    );
  }
  deps.reporter.info(`Tunnel token ${token} exists in ${provider} (its value is not read)`);

  const mirrored = mirroredImage(image);
  const pinned = `${mirrored.source}@${mirrored.digest}`;
  let mirror: InstallResult['mirror'];
  try {
    mirror = await deps.mirror.ensureMirrored(mirrored);
  } catch (err) {
    const cause = err instanceof Error ? err.message : String(err);
    throw new PodminError(
      err instanceof PodminError ? err.code : 'IO_ERROR',
      `installing ${CLOUDFLARED_NAME}: mirroring the pinned image ${pinned}: ${cause}`,
      {
        cause: err,
        hint: 'only the pinned digest is accepted; nothing was committed to the desired state',
      },
    );
  }
  // An upload or repair is reported by the mirror itself; a reuse writes nothing, so say so.
  if (mirror === 'present') {
    deps.reporter.info(
      `Reusing ${mirrored.path} (${mirrored.version}, ${mirrored.digest}): already mirrored`,
    );
  }

  const committed = await deps.commit(
    { name: deployment.name, nodegroup: deployment.nodegroup, podYaml: deployment.podYaml },
    options.signing === undefined ? {} : { signing: options.signing },
  );
  return {
    key: committed.key,
    changed: committed.changed,
    mirror,
    image: firstImage(deployment),
    deployment,
  };
}

/** The image of the Pod's only container. */
function firstImage(deployment: Deployment): string {
  const spec = deployment.pod['spec'] as { containers?: Array<{ image?: unknown }> } | undefined;
  const image = spec?.containers?.[0]?.image;
  if (typeof image !== 'string') {
    throw new PodminError('INTERNAL', 'installing cloudflared: the Pod has no container image');
  }
  return image;
}

import { PodminError, ValidationError, hasCode } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';
import {
  isPinnedReference,
  pinPodImages,
  podImageUses,
  stringifyCanonical,
  type PodImageUse,
} from '@podmin/util-manifest';
import {
  APPS_NAMESPACE,
  CLUSTER_REGISTRY,
  MAX_LAYOUT_INDEX_BYTES,
  findTagged,
  parseImageIndex,
  parseReference,
  refName,
  repositoryPrefix,
  type Descriptor,
  type ImageIndex,
} from '@podmin/util-oci';
import type { DesiredStateStore } from './desired-state.ports';

/**
 * The `index.json` reads of the repositories a deployment's images live in: one GET per
 * distinct repository, started on the first request for it and shared by everyone who asks
 * (deploy's preflight and the digest pinning), so pinning adds no request when the preflight
 * ran and, without it, one per distinct repository, all in parallel.
 */
export class ImageIndexReads {
  private readonly reads = new Map<string, Promise<ImageIndex | undefined>>();

  constructor(private readonly bucket: Pick<DesiredStateStore, 'get'>) {}

  /** The bucket key of an image's repository `index.json`. */
  static keyOf(image: string): string {
    return `${repositoryPrefix(parseReference(image).repository)}index.json`;
  }

  /** The image's repository `index.json`, or undefined when the bucket has none. */
  get(image: string): Promise<ImageIndex | undefined> {
    const key = ImageIndexReads.keyOf(image);
    let read = this.reads.get(key);
    if (read === undefined) {
      read = this.read(key);
      // Observed at once: it may be awaited only after a later turn.
      read.catch(() => undefined);
      this.reads.set(key, read);
    }
    return read;
  }

  /** How many distinct `index.json` reads were started. */
  get started(): number {
    return this.reads.size;
  }

  private async read(key: string): Promise<ImageIndex | undefined> {
    try {
      const object = await this.bucket.get(key, { maxBytes: MAX_LAYOUT_INDEX_BYTES });
      return parseImageIndex(object.body, key);
    } catch (err) {
      if (hasCode(err, 'OBJECT_NOT_FOUND')) return undefined;
      throw err;
    }
  }
}

/** `registry.podmin.internal/apps/web:v1` → the shorthand `web:v1` push publishes there. */
export function shorthandOf(repository: string, suffix: string): string {
  const path = repository.startsWith(`${APPS_NAMESPACE}/`)
    ? repository.slice(APPS_NAMESPACE.length + 1)
    : `${CLUSTER_REGISTRY}/${repository}`;
  return `${path}${suffix}`;
}

/** The command that publishes an image at `image` (a mirror is setup's). */
export function publishFix(image: string): string {
  const ref = parseReference(image);
  const suffix = ref.tag !== undefined ? `:${ref.tag}` : `@${ref.digest ?? ''}`;
  if (!ref.repository.startsWith(`${APPS_NAMESPACE}/`)) {
    return 'mirror/ holds setup-managed images: run `podmin setup`';
  }
  return `publish it there: \`podmin push <image> ${shorthandOf(ref.repository, suffix)}\` (or push first and use the reference push prints)`;
}

/**
 * The descriptor a tag names in its repository's `index.json`, or the message saying why there
 * is none (the preflight's wording, naming the push that fixes it).
 */
export function taggedDescriptor(
  image: string,
  index: ImageIndex | undefined,
): { descriptor: Descriptor } | { problem: string } {
  const ref = parseReference(image);
  const key = ImageIndexReads.keyOf(image);
  const tag = ref.tag ?? 'latest';
  if (index === undefined) {
    return {
      problem: `${image} is not published: the bucket has no ${key}; ${publishFix(image)}`,
    };
  }
  const descriptor = findTagged(index, tag);
  if (descriptor === undefined) {
    const tags = index.manifests.flatMap((d) => refName(d) ?? []).sort();
    return {
      problem: `${image} is not published: ${key} has no tag ${tag} (published: ${tags.join(', ') || 'none'}); ${publishFix(image)}`,
    };
  }
  return { descriptor };
}

/**
 * Resolves every tag reference among `uses` to the digest of the manifest (or image index) its
 * tag names now, through `reads`. Throws a ValidationError (INVALID_MANIFEST) naming every field
 * whose tag is not published, so nothing is committed; references by digest are not looked up.
 */
export async function resolveImageDigests(
  reads: ImageIndexReads,
  uses: readonly PodImageUse[],
  doing: string,
): Promise<Map<string, string>> {
  const tagged = uses.filter((use) => !isPinnedReference(use.image));
  const lookups = tagged.map((use) => reads.get(use.image));
  const problems: FieldProblem[] = [];
  const digests = new Map<string, string>();
  for (const [i, use] of tagged.entries()) {
    const found = taggedDescriptor(use.image, await lookups[i]);
    if ('problem' in found) problems.push({ field: use.field, message: found.problem });
    else digests.set(use.image, found.descriptor.digest);
  }
  if (problems.length > 0) {
    throw new ValidationError(
      `${doing}: pinning images by digest: a tag is not published; nothing was written`,
      problems,
      {
        hint: 'push each image with the command named, or keep tags with --no-pin (unsafe: whoever can move a tag in the bucket then changes what runs)',
      },
    );
  }
  return digests;
}

/** A Pod payload after pinning: the canonical YAML to commit, or undefined when nothing changed. */
export interface PinnedPod {
  pod: Record<string, unknown>;
  podYaml: string;
}

/**
 * Pins a Pod's tag references by digest (see `pinPodImages`), resolving them through `reads`.
 * Undefined when every image is already by digest: the payload then stays byte-identical.
 */
export async function pinPod(
  reads: ImageIndexReads,
  pod: Record<string, unknown>,
  doing: string,
): Promise<PinnedPod | undefined> {
  const uses = podImageUses(pod);
  if (uses.every((use) => isPinnedReference(use.image))) return undefined;
  const digests = await resolveImageDigests(reads, uses, doing);
  const pinned = pinPodImages(pod, digests);
  if (pinned === undefined) {
    throw new PodminError('INTERNAL', `${doing}: tag references remained after pinning`);
  }
  return { pod: pinned, podYaml: stringifyCanonical(pinned) };
}

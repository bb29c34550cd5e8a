import { PodminError } from '@podmin/util-errors';
import { formatReference, parseReference } from '@podmin/util-oci';
import { IMAGE_TAGS_ANNOTATION } from './constants';

/** One container's image in a Pod, with the DaemonSet field that set it. */
export interface PodImageUse {
  /** `spec.template.spec.containers[0].image`: the field deploy names in its messages. */
  field: string;
  /** The container's name. */
  container: string;
  /** The reference as the Pod holds it. */
  image: string;
}

/** Every regular and init container's image (init containers last), with its DaemonSet field. */
export function podImageUses(pod: Record<string, unknown>): PodImageUse[] {
  const spec = pod['spec'] as Record<string, unknown> | undefined;
  const uses: PodImageUse[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    const containers = spec?.[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((item: unknown, index) => {
      const { image, name } = item as { image?: unknown; name?: unknown };
      if (typeof image === 'string') {
        uses.push({
          field: `spec.template.spec.${list}[${index}].image`,
          container: typeof name === 'string' ? name : '',
          image,
        });
      }
    });
  }
  return uses;
}

/** True when the reference names its manifest by digest (a tag beside it is ignored by kubelet). */
export function isPinnedReference(image: string): boolean {
  return image.includes('@');
}

/**
 * The Pod with every tag reference replaced by `repository@digest` (DESIGN §6, deploy by
 * digest), the digest taken from `digests` (tag reference → manifest or image index digest), and
 * the original references kept for display in the `podmin.dev/image-tags` annotation: a JSON
 * object, keys sorted, container name → the reference as it was committed before pinning.
 * References already given by digest stay as they are. Returns undefined when nothing needs
 * pinning (so an already pinned payload stays byte-identical). A tag reference with no digest in
 * `digests` is an INTERNAL error: the caller resolves every one first.
 */
export function pinPodImages(
  pod: Record<string, unknown>,
  digests: ReadonlyMap<string, string>,
): Record<string, unknown> | undefined {
  const uses = podImageUses(pod).filter((use) => !isPinnedReference(use.image));
  if (uses.length === 0) return undefined;
  const pinned = structuredClone(pod);
  const metadata = (pinned['metadata'] ??= {}) as { annotations?: Record<string, string> };
  const annotations = (metadata.annotations ??= {});
  const tags = readImageTags(annotations[IMAGE_TAGS_ANNOTATION]) ?? {};
  const spec = pinned['spec'] as Record<string, Array<Record<string, unknown>>>;
  for (const list of ['containers', 'initContainers'] as const) {
    for (const container of spec[list] ?? []) {
      const image = container['image'];
      if (typeof image !== 'string' || isPinnedReference(image)) continue;
      const digest = digests.get(image);
      if (digest === undefined) {
        throw new PodminError(
          'INTERNAL',
          `pinning the image of container ${String(container['name'])}: ${image} was not resolved to a digest`,
        );
      }
      const ref = parseReference(image);
      container['image'] = formatReference({ ...ref, tag: undefined, digest });
      tags[String(container['name'])] = image;
    }
  }
  annotations[IMAGE_TAGS_ANNOTATION] = serializeImageTags(tags);
  return pinned;
}

/** The annotation's text: a JSON object with sorted keys, so equal maps give equal payloads. */
export function serializeImageTags(tags: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(tags).sort()) sorted[key] = tags[key] as string;
  return JSON.stringify(sorted);
}

/** The annotation's map (container name → tag reference), or undefined when absent or malformed. */
export function readImageTags(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const entries = Object.entries(parsed as Record<string, unknown>);
    if (!entries.every(([, v]) => typeof v === 'string')) return undefined;
    return Object.fromEntries(entries) as Record<string, string>;
  } catch {
    return undefined;
  }
}

/**
 * What to show for each container's image: the tag reference the annotation keeps beside the
 * digest (`registry.podmin.internal/apps/web:v1@sha256:…`), or the reference as committed.
 */
export function displayImages(pod: Record<string, unknown>): string[] {
  const metadata = pod['metadata'] as { annotations?: Record<string, string> } | undefined;
  const tags = readImageTags(metadata?.annotations?.[IMAGE_TAGS_ANNOTATION]) ?? {};
  const uses = podImageUses(pod);
  // Init containers first, as `podmin history` has always listed them.
  const ordered = [
    ...uses.filter((u) => u.field.includes('.initContainers[')),
    ...uses.filter((u) => !u.field.includes('.initContainers[')),
  ];
  return ordered.map((use) => {
    const tag = tags[use.container];
    if (tag === undefined || !isPinnedReference(use.image)) return use.image;
    return `${tag}@${use.image.slice(use.image.indexOf('@') + 1)}`;
  });
}

/**
 * Payload check of the `podmin.dev/image-tags` annotation: a JSON object whose keys name
 * containers of the Pod that run a digest reference, and whose values are tag references of the
 * same repository. Problems go to `add` under the annotation's path.
 */
export function checkImageTagsAnnotation(
  value: string,
  spec: Record<string, unknown> | undefined,
  path: string,
  add: (path: string, message: string) => void,
): void {
  const tags = readImageTags(value);
  if (tags === undefined) {
    add(path, 'must be a JSON object mapping container names to image references');
    return;
  }
  const images = new Map(
    podImageUses({ spec }).map((use): [string, string] => [use.container, use.image]),
  );
  for (const [container, tag] of Object.entries(tags)) {
    const image = images.get(container);
    if (image === undefined || !isPinnedReference(image)) {
      add(
        path,
        `names container ${JSON.stringify(container)}, which is not a container of this Pod running an image by digest`,
      );
      continue;
    }
    let same = false;
    try {
      const a = parseReference(tag);
      const b = parseReference(image);
      same = a.registry === b.registry && a.repository === b.repository && a.tag !== undefined;
    } catch {
      same = false;
    }
    if (!same) {
      add(
        path,
        `container ${JSON.stringify(container)}: ${JSON.stringify(tag)} is not a tag reference of the repository its image ${image} names`,
      );
    }
  }
}

import crypto from 'node:crypto';
import type { InMemoryObjectStore } from '@podmin/testing';
import {
  OCI_INDEX_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  blobPath,
  emptyLayoutIndex,
  parseImageIndex,
  serializeLayoutIndex,
  withTag,
  type Descriptor,
} from '@podmin/util-oci';

const digestOf = (body: string): string =>
  `sha256:${crypto.createHash('sha256').update(body).digest('hex')}`;

/**
 * Publishes `apps/<repo>` with `tag` as an image index of `arches`, as push writes it (the
 * nested manifests lifted into index.json; a tag already there moves). `salt` makes another
 * image under the same tag. Returns the image index digest the tag now names.
 */
export function publishImage(
  bucket: InMemoryObjectStore,
  repo: string,
  tag: string,
  arches: string[] = ['amd64', 'arm64'],
  salt = '',
): string {
  const nested: Descriptor[] = arches.map((arch) => {
    const body = JSON.stringify({ arch, salt });
    return {
      mediaType: OCI_MANIFEST_MEDIA_TYPE,
      digest: digestOf(body),
      size: body.length,
      platform: { os: 'linux', architecture: arch },
    };
  });
  const indexBody = JSON.stringify({
    schemaVersion: 2,
    mediaType: OCI_INDEX_MEDIA_TYPE,
    manifests: nested,
  });
  const image: Descriptor = {
    mediaType: OCI_INDEX_MEDIA_TYPE,
    digest: digestOf(indexBody),
    size: indexBody.length,
  };
  const key = `apps/${repo}/index.json`;
  const current = bucket.objects.has(key)
    ? parseImageIndex(bucket.objects.get(key)!.body, key)
    : emptyLayoutIndex();
  bucket.store(`apps/${repo}/${blobPath(image.digest)}`, indexBody);
  bucket.store(key, serializeLayoutIndex(withTag(current, { tag, image, nested })));
  return image.digest;
}

/** OCI image index (multi-platform). */
export const OCI_INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json';
/** OCI image manifest (one platform). */
export const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
/** OCI image configuration. */
export const OCI_CONFIG_MEDIA_TYPE = 'application/vnd.oci.image.config.v1+json';
/** OCI gzip-compressed tar layer. */
export const OCI_LAYER_GZIP_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+gzip';
/** OCI uncompressed tar layer. */
export const OCI_LAYER_TAR_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar';
/** Docker manifest list (schema 2), the Docker counterpart of an OCI index. */
export const DOCKER_MANIFEST_LIST_MEDIA_TYPE =
  'application/vnd.docker.distribution.manifest.list.v2+json';
/** Docker image manifest (schema 2). */
export const DOCKER_MANIFEST_MEDIA_TYPE = 'application/vnd.docker.distribution.manifest.v2+json';
/** Docker image configuration. */
export const DOCKER_CONFIG_MEDIA_TYPE = 'application/vnd.docker.container.image.v1+json';
/** Docker gzip-compressed tar layer. */
export const DOCKER_LAYER_GZIP_MEDIA_TYPE = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

/** Media types of documents that list other manifests (OCI index, Docker manifest list). */
export const INDEX_MEDIA_TYPES: readonly string[] = [
  OCI_INDEX_MEDIA_TYPE,
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
];
/** Media types of single-platform image manifests (OCI and Docker schema 2). */
export const IMAGE_MANIFEST_MEDIA_TYPES: readonly string[] = [
  OCI_MANIFEST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
];
/** Every manifest media type the podmin registry serves. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [
  ...INDEX_MEDIA_TYPES,
  ...IMAGE_MANIFEST_MEDIA_TYPES,
];

/** True for an OCI index or Docker manifest list media type. */
export function isIndexMediaType(mediaType: string): boolean {
  return INDEX_MEDIA_TYPES.includes(mediaType);
}

/** True for an OCI or Docker schema 2 image manifest media type. */
export function isImageManifestMediaType(mediaType: string): boolean {
  return IMAGE_MANIFEST_MEDIA_TYPES.includes(mediaType);
}

// RFC 6838 section 4.2: type "/" subtype, each 1..127 restricted-name characters.
const RESTRICTED_NAME = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}';
const MEDIA_TYPE = new RegExp(`^${RESTRICTED_NAME}/${RESTRICTED_NAME}$`);

/** True when `value` is a syntactically valid media type without parameters (RFC 6838). */
export function isValidMediaType(value: string): boolean {
  return MEDIA_TYPE.test(value);
}

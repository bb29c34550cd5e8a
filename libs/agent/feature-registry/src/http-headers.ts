/** Header every distribution API response carries. */
export const REGISTRY_API_VERSION_HEADER = 'Docker-Distribution-API-Version';
/** Content type of blob responses. */
export const OCI_BLOB_CONTENT_TYPE = 'application/octet-stream';

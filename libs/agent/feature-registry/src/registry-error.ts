/** Error codes of the OCI distribution spec that this registry returns, plus UNKNOWN for 500s. */
export type OciErrorCode =
  | 'BLOB_UNKNOWN'
  | 'DIGEST_INVALID'
  | 'MANIFEST_UNKNOWN'
  | 'NAME_INVALID'
  | 'NAME_UNKNOWN'
  | 'TAG_INVALID'
  | 'UNSUPPORTED'
  | 'UNKNOWN';

/** A registry failure with the HTTP status and OCI error code the client receives. */
export class RegistryError extends Error {
  constructor(
    readonly status: number,
    readonly code: OciErrorCode,
    message: string,
    options: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RegistryError';
    this.headers = options.headers ?? {};
  }

  /** Extra response headers, e.g. `Allow` on 405 or `Content-Range` on 416. */
  readonly headers: Record<string, string>;
}

/** The OCI error body: `{"errors":[{"code","message","detail"?}]}`. */
export function ociErrorBody(code: OciErrorCode, message: string, detail?: unknown): string {
  return JSON.stringify({
    errors: [detail === undefined ? { code, message } : { code, message, detail }],
  });
}

/** How long an AWS request may take to connect, and stay silent, before it fails. */
export interface AwsRequestTimeouts {
  readonly connectMs: number;
  readonly idleMs: number;
}

/** What every podmin AWS client is built from. */
export interface AwsClientOptions {
  /** AWS region, e.g. `eu-west-1`. */
  region: string;
  /** Named profile from the shared AWS config/credentials files; default chain otherwise. */
  profile?: string;
  /** Custom endpoint (an emulator or compatible server). */
  endpoint?: string;
  /** Use the regional dual-stack (IPv4 and IPv6) endpoint; ignored when `endpoint` is set. */
  dualStack?: boolean;
  /** Static credentials, for emulators and tests; the default provider chain when omitted. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /**
   * Bounds on one request: connecting, and a socket silent this long (a service that accepts
   * connections but never answers). Unset: the SDK's (none), as an interactive CLI wants.
   */
  timeouts?: AwsRequestTimeouts;
}

/** The SDK client configuration for `options`; `endpointExtras` apply only with an endpoint. */
export function awsClientConfig(
  options: AwsClientOptions,
  endpointExtras: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    region: options.region,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.endpoint === undefined
      ? options.dualStack === true
        ? { useDualstackEndpoint: true }
        : {}
      : { endpoint: options.endpoint, ...endpointExtras }),
    ...(options.timeouts === undefined
      ? {}
      : {
          requestHandler: {
            connectionTimeout: options.timeouts.connectMs,
            socketTimeout: options.timeouts.idleMs,
          },
        }),
  };
}

/**
 * An `--otel-logs` value that sets every option, and the `otel_logs` module input `podmin setup`
 * writes for it (the same for the in-process setup and the built CLI).
 */
export const OTEL_LOGS_EXAMPLE = {
  flag: 'endpoint=https://otlp.example.com/v1/logs,mtls=true,ca=s3://example-trust/otel/ca.pem,headers-secret=true',
  moduleInput: {
    endpoint: 'https://otlp.example.com/v1/logs',
    protocol: 'http',
    mtls: true,
    ca_bucket: 'example-trust',
    ca_key: 'otel/ca.pem',
    headers_secret: true,
  },
} as const;

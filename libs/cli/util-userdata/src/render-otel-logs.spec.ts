import { execFileSync } from 'node:child_process';
import { dependencyManifest } from '@podmin/testing';
import { FILE_DEPENDENCIES, type DependencyManifest } from '@podmin/util-dependencies';
import { renderAwsUserData, type AwsUserDataInput } from './render';

/** A published manifest with the canonical set, and the log export packages when `otel`. */
const manifest = (otel: boolean): DependencyManifest =>
  dependencyManifest({
    otel,
    versions: { libpq5: '17.6-0+deb13u1', 'fluent-bit': '5.0.10' },
    digests: { libpq5: `sha256:${'5'.repeat(64)}` },
  });

const input = (overrides: Partial<AwsUserDataInput> = {}): AwsUserDataInput => ({
  arch: 'arm64',
  cluster: 'prod',
  nodegroup: 'workers',
  bucket: 'podmin-prod-bucket',
  region: 'eu-west-1',
  manifest: manifest(true),
  ...overrides,
});

/** Values bash reads back from the rendered script's render block (run, not only matched). */
function bashValues(script: string): Record<string, string> {
  const start = script.indexOf("cluster='");
  const end = script.indexOf(')\n', script.indexOf('otel_logs_packages=(')) + 2;
  const out = execFileSync(
    'bash',
    [
      '-c',
      `${script.slice(start, end)}\nprintf '%s\\n' "$otel_logs_endpoint" "$otel_logs_protocol" "$otel_logs_mtls" "$otel_logs_ca" "$otel_logs_headers_provider" "\${otel_logs_packages[@]}"`,
    ],
    { encoding: 'utf8' },
  ).split('\n');
  const [endpoint = '', protocol = '', mtls = '', ca = '', provider = '', ...packages] = out;
  return {
    endpoint,
    protocol,
    mtls,
    ca,
    provider,
    packages: packages.filter((p) => p !== '').join(' '),
  };
}

describe('renderAwsUserData with --otel-logs', () => {
  it('leaves the script byte for byte unchanged without log export', () => {
    const without = renderAwsUserData(input({ manifest: manifest(false) }));
    expect(without).toBe(renderAwsUserData(input({ manifest: manifest(true) })));
    // No log export value is rendered: the script's own defaults leave it off (run, not matched).
    const block = without.slice(0, without.indexOf('\n)\n') + 2);
    expect(block).not.toContain('otel_logs_');
    expect(block).not.toContain('fluent-bit');
    const enabled = execFileSync(
      'bash',
      [
        '-c',
        `${without.slice(0, without.indexOf('\nlog() {'))}\nprintf '%s|%s' "$otel_logs_endpoint" "\${#otel_logs_packages[@]}"`,
      ],
      { encoding: 'utf8' },
    );
    expect(enabled).toBe('|0');
  });

  it('carries the configuration and the packages in install order, libpq5 first', () => {
    const script = renderAwsUserData(
      input({
        otelLogs: {
          endpoint: 'https://otlp.example.com:4318/v1/logs?tenant=a&b=c',
          protocol: 'http',
          mtls: true,
          ca: 's3://trust-bucket/otel/ca.pem',
          headersProvider: 'aws-secrets-manager',
        },
      }),
    );
    expect(bashValues(script)).toEqual({
      endpoint: 'https://otlp.example.com:4318/v1/logs?tenant=a&b=c',
      protocol: 'http',
      mtls: 'true',
      ca: 's3://trust-bucket/otel/ca.pem',
      provider: 'aws-secrets-manager',
      packages: [
        `libpq5.deb|dependencies/libpq5/libpq5-v17.6-0+deb13u1-linux-arm64.deb|sha256:${'5'.repeat(64)}|${1000 + FILE_DEPENDENCIES.length}`,
        `fluent-bit.deb|dependencies/fluent-bit/fluent-bit-v5.0.10-linux-arm64.deb|sha512:${'9'.repeat(128)}|${1001 + FILE_DEPENDENCIES.length}`,
      ].join(' '),
    });
    const minimal = renderAwsUserData(
      input({ otelLogs: { endpoint: 'https://c.example:4317', protocol: 'grpc', mtls: false } }),
    );
    expect(bashValues(minimal)).toMatchObject({
      protocol: 'grpc',
      mtls: 'false',
      ca: '',
      provider: '',
    });
  });

  it('refuses bad values and a manifest without the packages, naming each field', () => {
    let problems: Array<{ field: string; message: string }> = [];
    try {
      renderAwsUserData(
        input({
          manifest: manifest(false),
          otelLogs: {
            endpoint: "https://x.example/'$(reboot)'",
            protocol: 'udp' as 'http',
            mtls: true,
            ca: 's3://trust-bucket/*',
            headersProvider: 'local' as 'aws-parameter-store',
          },
        }),
      );
    } catch (err) {
      problems = (err as { problems: typeof problems }).problems;
    }
    expect(problems.map((p) => p.field)).toEqual([
      'otelLogs.endpoint',
      'otelLogs.protocol',
      'otelLogs.ca',
      'otelLogs.headersProvider',
      'manifest.dependencies.libpq5.arm64',
      'manifest.dependencies.fluent-bit.arm64',
    ]);
    expect(problems[4]?.message).toContain('--otel-logs installs libpq5 and Fluent Bit');
  });
});

import { ValidationError } from '@podmin/util-errors';
import { resolveZoneName } from './nodegroup-flag';
import { parseSetupFlags, type SetupFlags } from './setup-flags';
import { vpcCidrProblems } from './vpc-cidr';

/** The ValidationError a call throws (fails the test when it does not throw one). */
function problemsOf(flags: SetupFlags): string[] {
  try {
    parseSetupFlags(flags);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).code).toBe('INVALID_ARGUMENT');
    return (err as ValidationError).problems.map((p) => `${p.field}: ${p.message}`);
  }
  throw new Error(`expected ${JSON.stringify(flags)} to be rejected`);
}

const base = { vpcCidr: '10.0.0.0/16', nodegroup: ['default'] };

describe('parseSetupFlags', () => {
  it('applies the spec defaults to a bare NodeGroup', () => {
    expect(parseSetupFlags(base)).toEqual({
      vpcCidr: '10.0.0.0/16',
      nodegroups: [{ name: 'default', size: 1, diskSize: 20, instanceType: 't4g.small' }],
    });
  });

  it('parses the spec example', () => {
    const request = parseSetupFlags({
      vpcCidr: '10.0.0.0/16',
      nat64: '',
      nodegroup: [
        'default',
        'workers,size=3,disk-size=100,instance-type=c8g.large,zone=b,nat64=t4g.small',
      ],
    });
    expect(request.nat64).toEqual({ instanceType: 't4g.nano' });
    expect(request.nodegroups[1]).toEqual({
      name: 'workers',
      size: 3,
      diskSize: 100,
      instanceType: 'c8g.large',
      zone: 'b',
      nat64: 't4g.small',
    });
  });

  it('takes --nat64=instance-type=T and full zone names', () => {
    const request = parseSetupFlags({
      ...base,
      nat64: 'instance-type=c7gn.medium',
      nodegroup: ['a,zone=eu-central-1c,disk-size=8', 'b,disk-size=16384,size=0'],
    });
    expect(request.nat64).toEqual({ instanceType: 'c7gn.medium' });
    expect(request.nodegroups.map((g) => [g.zone, g.diskSize, g.size])).toEqual([
      ['eu-central-1c', 8, 1],
      [undefined, 16384, 0],
    ]);
  });

  it.each([
    [{ vpcCidr: undefined }, '--vpc-cidr: is required'],
    [{ vpcCidr: '8.8.0.0/16' }, '--vpc-cidr: "8.8.0.0/16" is not private'],
    [{ vpcCidr: '172.32.0.0/16' }, 'is not private'],
    [{ vpcCidr: '10.0.0.0/8' }, 'has prefix /8; AWS allows /16 to /28'],
    [{ vpcCidr: '10.0.0.0/29' }, 'has prefix /29'],
    [{ vpcCidr: '10.0.1.0/16' }, 'has host bits set; write the network address 10.0.0.0/16'],
    [{ vpcCidr: '10.0.0.256/24' }, 'is not a private IPv4 CIDR'],
    [{ vpcCidr: '10.0.0.0' }, 'is not a private IPv4 CIDR'],
    [{ vpcCidr: '010.0.0.0/16' }, 'is not a private IPv4 CIDR'],
    [{ nodegroup: [] }, '--nodegroup: at least one is required'],
    [{ nodegroup: ['Default'] }, '--nodegroup[0]: NodeGroup name "Default" is invalid'],
    [{ nodegroup: ['-x'] }, 'DNS-1123 label'],
    [{ nodegroup: ['a'.repeat(64)] }, 'is invalid'],
    [{ nodegroup: ['a', 'a,size=2'] }, '--nodegroup[1]: NodeGroup a is given more than once'],
    [{ nodegroup: ['a,size=x', 'a'] }, '--nodegroup[1]: NodeGroup a is given more than once'],
    [
      { nodegroup: ['a,color=red'] },
      'unknown key "color"; allowed: size, disk-size, instance-type, zone, nat64',
    ],
    [{ nodegroup: ['a,size=1,size=2'] }, '--nodegroup[0] a size: size is given more than once'],
    [{ nodegroup: ['a,size'] }, 'size needs a value'],
    [{ nodegroup: ['a,size='] }, 'size needs a value'],
    [{ nodegroup: ['a,size=-1'] }, '"-1" is not an integer from 0 through 1000'],
    [{ nodegroup: ['a,size=1001'] }, 'is not an integer from 0 through 1000'],
    [
      { nodegroup: ['a,disk-size=7'] },
      '--nodegroup[0] a disk-size: "7" is not an integer number of GiB from 8 through 16384',
    ],
    [{ nodegroup: ['a,disk-size=16385'] }, 'from 8 through 16384'],
    [{ nodegroup: ['a,disk-size=20.5'] }, 'from 8 through 16384'],
    [{ nodegroup: ['a,disk-size=1e3'] }, 'from 8 through 16384'],
    [
      { nodegroup: ['a,instance-type=T4G.small'] },
      'instance-type: "T4G.small" is not an EC2 instance type',
    ],
    [{ nodegroup: ['a,instance-type=t4g'] }, 'is not an EC2 instance type'],
    [{ nodegroup: ['a,zone=B'] }, 'zone: "B" is neither a zone name'],
    [{ nodegroup: ['a,zone=bc'] }, 'is neither a zone name'],
    [{ nodegroup: ['a,nat64=yes'] }, 'nat64: "yes" is not an EC2 instance type'],
    [{ nat64: 't4g.micro' }, '--nat64: "t4g.micro" is not allowed; give --nat64 alone'],
    [{ nat64: 'instance-type=' }, '--nat64: instance-type "" is not an EC2 instance type'],
    [{ nat64: 'type=t4g.nano' }, '--nat64: "type=t4g.nano" is not allowed'],
  ] as Array<[Partial<SetupFlags>, string]>)('rejects %j naming the flag', (flags, expected) => {
    const problems = problemsOf({ ...base, ...flags });
    expect(problems.join('\n')).toContain(expected);
  });

  it('takes --workload-ca-publish s3://BUCKET/KEY as the exact object', () => {
    expect(
      parseSetupFlags({ ...base, workloadCaPublish: 's3://example-trust/podmin/(demo)_ca-1.pem' })
        .workloadCaPublish,
    ).toEqual({
      bucket: 'example-trust',
      key: 'podmin/(demo)_ca-1.pem',
      url: 's3://example-trust/podmin/(demo)_ca-1.pem',
    });
    expect(parseSetupFlags(base)).not.toHaveProperty('workloadCaPublish');
  });

  it.each([
    ['https://example-trust/ca.pem', 'is not s3://BUCKET/KEY'],
    ['s3://example-trust', 'is not s3://BUCKET/KEY'],
    ['s3://example-trust/', 'is not s3://BUCKET/KEY'],
    ['s3://Example_Trust/ca.pem', 'is not s3://BUCKET/KEY with a valid S3 bucket name'],
    ['s3://example-trust/ca/*.pem', 'no *, ?, $ or quotes'],
    ['s3://example-trust/ca/${aws:userid}.pem', 'no *, ?, $ or quotes'],
    ["s3://example-trust/ca'.pem", 'no *, ?, $ or quotes'],
    ['s3://example-trust/ca//bundle.pem', 'none empty, . or ..'],
    ['s3://example-trust/ca/../bundle.pem', 'none empty, . or ..'],
    [`s3://example-trust/${'a'.repeat(1025)}`, 'at most 1024 characters'],
  ])('rejects the malformed --workload-ca-publish %s naming the flag', (url, expected) => {
    const problems = problemsOf({ ...base, workloadCaPublish: url });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^--workload-ca-publish: /);
    expect(problems[0]).toContain(expected);
  });

  it('lists every problem at once', () => {
    const problems = problemsOf({
      vpcCidr: '1.2.3.4/16',
      nodegroup: ['ok', 'BAD', 'x,disk-size=2'],
      nat64: 'bogus',
    });
    expect(problems).toHaveLength(4);
  });
});

describe('vpcCidrProblems', () => {
  it.each([
    '10.0.0.0/16',
    '10.255.255.240/28',
    '172.16.0.0/16',
    '172.31.128.0/17',
    '192.168.0.0/16',
  ])('accepts %s', (cidr) => expect(vpcCidrProblems(cidr)).toEqual([]));
});

describe('resolveZoneName', () => {
  it('expands a suffix letter and keeps full names of the region', () => {
    expect(resolveZoneName('b', 'us-west-2')).toBe('us-west-2b');
    expect(resolveZoneName('us-west-2c', 'us-west-2')).toBe('us-west-2c');
    expect(resolveZoneName('eu-west-1a', 'us-west-2')).toBeUndefined();
  });
});

describe('--otel-logs', () => {
  const otel = (otelLogs: string) => parseSetupFlags({ ...base, otelLogs }).otelLogs;

  it('is absent without the flag, and defaults to OTLP/HTTP without mTLS, CA or headers', () => {
    expect(parseSetupFlags(base).otelLogs).toBeUndefined();
    expect(otel('endpoint=https://otlp.example.com/v1/logs')).toEqual({
      endpoint: 'https://otlp.example.com/v1/logs',
      protocol: 'http',
      mtls: false,
      headersSecret: false,
    });
  });

  it('takes every key the spec names, keeping the exact URL', () => {
    expect(
      otel(
        'endpoint=https://collector.internal:4318/custom/logs?tenant=a,protocol=http,mtls=true,ca=s3://trust-bucket/otel/ca.pem,headers-secret=true',
      ),
    ).toEqual({
      endpoint: 'https://collector.internal:4318/custom/logs?tenant=a',
      protocol: 'http',
      mtls: true,
      ca: { bucket: 'trust-bucket', key: 'otel/ca.pem', url: 's3://trust-bucket/otel/ca.pem' },
      headersSecret: true,
    });
    expect(otel('protocol=grpc,endpoint=https://collector.internal:4317,mtls=false')).toEqual({
      endpoint: 'https://collector.internal:4317',
      protocol: 'grpc',
      mtls: false,
      headersSecret: false,
    });
  });

  it.each([
    [
      'endpoint=https://a.example/v1/logs,color=red',
      /^--otel-logs: unknown key "color"; allowed: endpoint, protocol, mtls, ca, headers-secret/,
    ],
    [
      'endpoint=http://a.example/v1/logs',
      /^--otel-logs endpoint: "http:\/\/a.example\/v1\/logs" is not an https:\/\/ URL; TLS/,
    ],
    ['endpoint=ftp://a.example/x', /^--otel-logs endpoint: .* is not an https:\/\/ URL/],
    ['endpoint=not a url', /^--otel-logs endpoint: .* printable ASCII characters without spaces/],
    ['endpoint=https://user:pw@a.example/v1/logs', /^--otel-logs endpoint: .* carries credentials/],
    ["endpoint=https://a.example/v1/logs'", /^--otel-logs endpoint: .* without spaces, quotes/],
    ['endpoint=https://a.example/v1/logs#x', /^--otel-logs endpoint: .* has a fragment/],
    [
      'endpoint=https://a.example:4317/v1/logs,protocol=grpc',
      /^--otel-logs endpoint: .* OTLP\/gRPC endpoint is https:\/\/HOST\[:PORT\]/,
    ],
    ['protocol=grpc', /^--otel-logs endpoint: is required/],
    [
      'endpoint=https://a.example/v1/logs,protocol=udp',
      /^--otel-logs protocol: "udp" is not allowed; use http .* or grpc/,
    ],
    [
      'endpoint=https://a.example/v1/logs,mtls=yes',
      /^--otel-logs mtls: "yes" is not allowed; use true or false/,
    ],
    [
      'endpoint=https://a.example/v1/logs,headers-secret=1',
      /^--otel-logs headers-secret: "1" is not allowed; use true or false/,
    ],
    ['endpoint=https://a.example/v1/logs,mtls', /^--otel-logs mtls: mtls needs a value/],
    [
      'endpoint=https://a.example/v1/logs,mtls=true,mtls=false',
      /^--otel-logs mtls: mtls is given more than once/,
    ],
    [
      'endpoint=https://a.example/v1/logs,ca=s3://trust-bucket/',
      /^--otel-logs ca: "s3:\/\/trust-bucket\/" is not s3:\/\/BUCKET\/KEY/,
    ],
    [
      'endpoint=https://a.example/v1/logs,ca=s3://Bad_Bucket/ca.pem',
      /^--otel-logs ca: .* is not s3:\/\/BUCKET\/KEY with a valid S3 bucket name/,
    ],
    [
      'endpoint=https://a.example/v1/logs,ca=https://trust/ca.pem',
      /^--otel-logs ca: .* is not s3:\/\/BUCKET\/KEY/,
    ],
    [
      'endpoint=https://a.example/v1/logs,ca=s3://trust-bucket/certs/*.pem',
      /^--otel-logs ca: .* the key must be .*\(no \*, \?/,
    ],
    [
      'endpoint=https://a.example/v1/logs,ca=s3://trust-bucket/a/../ca.pem',
      /^--otel-logs ca: .* none empty, \. or \.\./,
    ],
  ])('refuses %s, naming the key and what is allowed', (value, expected) => {
    const problems = problemsOf({ ...base, otelLogs: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(expected);
  });

  it('reports every bad key at once, beside the other flags', () => {
    const problems = problemsOf({
      vpcCidr: '10.0.0.0/8',
      nodegroup: ['default'],
      otelLogs: 'endpoint=http://x,protocol=udp,mtls=on,extra=1',
    });
    expect(problems.map((p) => p.split(':')[0])).toEqual([
      '--vpc-cidr',
      '--otel-logs',
      '--otel-logs protocol',
      '--otel-logs mtls',
      '--otel-logs endpoint',
    ]);
  });
});

// The receiving end of podmin's log export, for real: the OpenTelemetry Collector built from its
// Go modules (tools/otelcol/build.sh) with the core OTLP receiver requiring client certificates
// from the workload CA, our podminauth middleware and the jsonl exporter. Real OTLP clients
// (Node's HTTPS client posting a protobuf ExportLogsServiceRequest, and grpc-js) present the
// certificates a node, a Pod, another cluster and an expired leaf would; what the collector
// accepted is read back from the exporter's file.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { Client, Metadata, credentials, status, type ServiceError } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { parseOtelHeaders } from '@podmin/agent-util-fluent-bit';
import {
  describeIf,
  freeLoopbackPort,
  makeTempDir,
  repoRoot,
  waitFor,
  which,
  type TempDir,
} from '@podmin/testing';
import {
  DAY_MS,
  WorkloadCaKey,
  createWorkloadCaCertificate,
  issueTelemetryLeaf,
  issueWorkloadLeaf,
  otelLogsSpiffeId,
  validateCaBundle,
  type IssuedCertificate,
  type WorkloadIssuer,
} from '@podmin/util-pki';

const BUILD = path.join(repoRoot(), 'tools/otelcol/build.sh');
const CLUSTER = 'prod';
const NODE = { cluster: CLUSTER, nodeId: 'ip-10-0-1-5.ec2.internal' };
// The collector's server name: what its leaf names and what the exporter verifies.
const SERVER_NAME = 'otel-collector.observability.svc';
// The value of `otel-logs-headers --system` as a user stores it.
const HEADERS_SECRET = JSON.stringify({ Authorization: 'Bearer t0ken', 'X-Scope-OrgID': 'prod' });
const EXPORT_PATH = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';

// Without Go the collector can be used only when a binary for this source is cached already;
// build.sh answers that at once (exit 3 when it cannot).
function unavailable(): string | undefined {
  if (which('go') !== undefined) return undefined;
  const probe = spawnSync('bash', [BUILD], { encoding: 'utf8', timeout: 30_000 });
  return probe.status === 0
    ? undefined
    : 'Go is not installed and no podmin-otelcol is cached (tools/otelcol/build.sh builds it)';
}
const skipReason = unavailable();

// The fields of OTLP's logs protos this test sends, with their upstream numbers
// (opentelemetry-proto: collector/logs/v1, logs/v1, common/v1, resource/v1).
const OTLP = protobuf.parse(`
syntax = "proto3";
package otlp;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; }
message LogRecord {
  fixed64 time_unix_nano = 1; int32 severity_number = 2; string severity_text = 3;
  AnyValue body = 5; repeated KeyValue attributes = 6; fixed64 observed_time_unix_nano = 11;
}
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
message ExportLogsServiceResponse { ExportLogsPartialSuccess partial_success = 1; }
message ExportLogsPartialSuccess { int64 rejected_log_records = 1; string error_message = 2; }
`).root;
const ExportRequest = OTLP.lookupType('otlp.ExportLogsServiceRequest');
const ExportResponse = OTLP.lookupType('otlp.ExportLogsServiceResponse');

/** One container line as a node's Fluent Bit sends it, with `body` as its unique marker. */
function exportRequest(body: string): Buffer {
  const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  const message = ExportRequest.fromObject({
    resourceLogs: [
      {
        resource: {
          attributes: [str('k8s.cluster.name', CLUSTER), str('host.name', NODE.nodeId)],
        },
        scopeLogs: [
          {
            scope: { name: 'fluent-bit' },
            logRecords: [
              {
                timeUnixNano: nowNs.toString(),
                observedTimeUnixNano: nowNs.toString(),
                severityNumber: 9,
                severityText: 'INFO',
                body: { stringValue: body },
                attributes: [
                  str('k8s.namespace.name', 'default'),
                  str('k8s.pod.name', 'web-7d9c-abcde'),
                  str('k8s.container.name', 'web'),
                  str('log.iostream', 'stdout'),
                ],
              },
            ],
          },
        ],
      },
    ],
  });
  return Buffer.from(ExportRequest.encode(message).finish());
}

/** A client identity: a PEM certificate and its key. */
interface ClientPair {
  cert: string;
  key: string;
}
const pair = (leaf: IssuedCertificate): ClientPair => ({
  cert: leaf.certificatePem,
  key: leaf.privateKeyPem,
});

/** Posts an OTLP/HTTP protobuf export; resolves with the HTTP status and body. */
function postLogs(
  port: number,
  ca: string,
  client: ClientPair,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port,
        servername: SERVER_NAME,
        path: '/v1/logs',
        method: 'POST',
        ca,
        cert: client.cert,
        key: client.key,
        agent: false,
        timeout: 10_000,
        headers: {
          ...headers,
          'content-type': 'application/x-protobuf',
          'content-length': body.length,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }),
        );
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('OTLP/HTTP request timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

/** Calls LogsService/Export over gRPC; resolves with the response bytes or the gRPC error. */
function exportGrpc(
  port: number,
  ca: string,
  client: ClientPair,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<Buffer | ServiceError> {
  const channel = new Client(
    `127.0.0.1:${port}`,
    credentials.createSsl(Buffer.from(ca), Buffer.from(client.key), Buffer.from(client.cert)),
    { 'grpc.ssl_target_name_override': SERVER_NAME, 'grpc.default_authority': SERVER_NAME },
  );
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name.toLowerCase(), value);
  const identity = (b: Buffer) => b;
  return new Promise<Buffer | ServiceError>((resolve) => {
    channel.makeUnaryRequest(
      EXPORT_PATH,
      identity,
      identity,
      body,
      metadata,
      { deadline: Date.now() + 10_000 },
      (err, response) => resolve(err ?? response ?? Buffer.alloc(0)),
    );
  }).finally(() => channel.close());
}

/** The log records the collector exported, as `{body, attributes, resource}` per record. */
function exported(file: string): { body: string; attributes: Record<string, string> }[] {
  if (!fs.existsSync(file)) return [];
  const records: { body: string; attributes: Record<string, string> }[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const data = JSON.parse(line) as {
      resourceLogs: {
        resource: { attributes: { key: string; value: { stringValue: string } }[] };
        scopeLogs: {
          logRecords: {
            body: { stringValue: string };
            attributes: { key: string; value: { stringValue: string } }[];
          }[];
        }[];
      }[];
    };
    for (const rl of data.resourceLogs) {
      const resource = rl.resource.attributes;
      for (const sl of rl.scopeLogs) {
        for (const r of sl.logRecords) {
          records.push({
            body: r.body.stringValue,
            attributes: Object.fromEntries(
              [...resource, ...r.attributes].map((a) => [a.key, a.value.stringValue]),
            ),
          });
        }
      }
    }
  }
  return records;
}

describeIf(
  skipReason === undefined,
  'otelcol',
  skipReason ?? '',
)('the OpenTelemetry Collector receiving podmin nodes’ logs', () => {
  let dir: TempDir;
  let collector: ChildProcess | undefined;
  let output = '';
  let outFile: string;
  let serverCa: string;
  let ports: { http: number; grpc: number; headersHttp: number; headersGrpc: number };
  let issuer: WorkloadIssuer;
  let telemetry: ClientPair;
  const secretHeaders = parseOtelHeaders(Buffer.from(HEADERS_SECRET), 'otel-logs-headers');

  beforeAll(async () => {
    const built = await new Promise<{ status: number | null; stdout: string; stderr: string }>(
      (resolve) => {
        const child = spawn('bash', [BUILD], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      },
    );
    if (built.status !== 0) throw new Error(`tools/otelcol/build.sh failed:\n${built.stderr}`);
    const binary = built.stdout.trim();

    dir = await makeTempDir('otelcol-');
    const now = new Date();
    // The workload CA was made three days ago, so an expired leaf of its own can exist.
    const caKey = WorkloadCaKey.fromSeed(Buffer.alloc(32, 1));
    issuer = {
      certificate: await createWorkloadCaCertificate(
        caKey,
        CLUSTER,
        new Date(now.getTime() - 3 * DAY_MS),
      ),
      key: caKey,
    };
    telemetry = pair(await issueTelemetryLeaf(issuer, NODE, now));
    // The collector's own server CA: the exporter's private `ca=` bundle, validated as a node
    // validates it. Its leaf names the collector's Service (serverAuth).
    const serverKey = WorkloadCaKey.fromSeed(Buffer.alloc(32, 2));
    const serverCaCert = await createWorkloadCaCertificate(serverKey, 'observability', now);
    serverCa = validateCaBundle(Buffer.from(serverCaCert.pem), now, 'exporter CA bundle');
    const serverLeaf = await issueWorkloadLeaf(
      { certificate: serverCaCert, key: serverKey },
      {
        cluster: 'observability',
        namespace: 'observability',
        pod: 'otel-collector-0',
        service: 'otel-collector',
      },
      now,
    );

    const file = (name: string, content: string) => {
      const p = path.join(dir.path, name);
      fs.writeFileSync(p, content, { mode: 0o600 });
      return p;
    };
    const tls = {
      cert_file: file('server.crt', serverLeaf.certificatePem),
      key_file: file('server.key', serverLeaf.privateKeyPem),
      client_ca_file: file('workload-ca.pem', issuer.certificate.pem),
      min_version: '1.3',
    };
    outFile = path.join(dir.path, 'received.jsonl');
    ports = {
      http: await freeLoopbackPort(),
      grpc: await freeLoopbackPort(),
      headersHttp: await freeLoopbackPort(),
      headersGrpc: await freeLoopbackPort(),
    };
    const protocols = (http: number, grpc: number, middleware: string) => ({
      http: { endpoint: `127.0.0.1:${http}`, tls, middlewares: [{ id: middleware }] },
      grpc: { endpoint: `127.0.0.1:${grpc}`, tls, middlewares: [{ id: middleware }] },
    });
    const uriPrefix = otelLogsSpiffeId(NODE).replace(/[^/]+$/, '');
    // JSON is YAML: the collector reads this file as its configuration.
    const config = {
      extensions: {
        'podminauth/node': { uri_prefix: uriPrefix },
        'podminauth/headers': { uri_prefix: uriPrefix, headers: secretHeaders },
      },
      receivers: {
        'otlp/node': { protocols: protocols(ports.http, ports.grpc, 'podminauth/node') },
        'otlp/headers': {
          protocols: protocols(ports.headersHttp, ports.headersGrpc, 'podminauth/headers'),
        },
      },
      exporters: { jsonl: { path: outFile } },
      service: {
        extensions: ['podminauth/node', 'podminauth/headers'],
        pipelines: { logs: { receivers: ['otlp/node', 'otlp/headers'], exporters: ['jsonl'] } },
        // No metrics endpoint (it would listen on :8888 of the host).
        telemetry: { metrics: { level: 'none' }, logs: { level: 'info' } },
      },
    };
    const configFile = file('config.yaml', JSON.stringify(config, null, 2));
    // Bounded even if this test process dies without its afterAll: `timeout` ends it.
    collector = spawn('timeout', ['-k', '5', '600', binary, '--config', `file:${configFile}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    collector.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    collector.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor(
      () => {
        if (collector?.exitCode !== null) throw new Error(`the collector exited:\n${output}`);
        return output.includes('Everything is ready') ? true : undefined;
      },
      'the collector to start',
      30_000,
    );
  }, 900_000);

  afterAll(async () => {
    if (collector !== undefined && collector.exitCode === null) {
      const exited = new Promise((resolve) => collector?.once('exit', resolve));
      collector.kill('SIGTERM');
      const timer = setTimeout(() => collector?.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await dir?.cleanup();
  });

  it('accepts the node’s telemetry leaf over OTLP/HTTP and exports the record', async () => {
    const response = await postLogs(ports.http, serverCa, telemetry, exportRequest('http-node'));
    expect(response.status).toBe(200);
    // No partial success: nothing rejected.
    expect(ExportResponse.decode(response.body).toJSON()).toEqual({ partialSuccess: {} });
    const record = await waitFor(
      () => exported(outFile).find((r) => r.body === 'http-node'),
      'the record in the exporter file',
      10_000,
    );
    expect(record.attributes).toEqual({
      'k8s.cluster.name': 'prod',
      'host.name': NODE.nodeId,
      'k8s.namespace.name': 'default',
      'k8s.pod.name': 'web-7d9c-abcde',
      'k8s.container.name': 'web',
      'log.iostream': 'stdout',
    });
  });

  it('refuses a workload Pod’s leaf from the same CA (its URI SAN is not a node’s)', async () => {
    const pod = pair(
      await issueWorkloadLeaf(
        issuer,
        { cluster: CLUSTER, namespace: 'default', pod: 'web-7d9c-abcde' },
        new Date(),
      ),
    );
    const response = await postLogs(ports.http, serverCa, pod, exportRequest('http-pod'));
    expect(response.status).toBe(401);
    // The reason is in the collector's log only (the client is told "unauthenticated").
    expect(response.body.toString()).toBe('unauthenticated\n');
    await waitFor(
      () =>
        output.includes(
          'URI SAN spiffe://prod.podmin.internal/ns/default/pod/web-7d9c-abcde is not under spiffe://prod.podmin.internal/system/otel-logs/node/',
        )
          ? true
          : undefined,
      'the refusal in the collector log',
      5_000,
    );
  });

  it('refuses, in the TLS handshake, a leaf naming the node from another cluster’s CA', async () => {
    const otherKey = WorkloadCaKey.fromSeed(Buffer.alloc(32, 3));
    const staging = {
      certificate: await createWorkloadCaCertificate(otherKey, 'staging', new Date()),
      key: otherKey,
    };
    const impostor = pair(await issueTelemetryLeaf(staging, NODE, new Date()));
    await expect(
      postLogs(ports.http, serverCa, impostor, exportRequest('http-other-ca')),
    ).rejects.toThrow(/alert unknown ca/);
  });

  it('refuses an expired telemetry leaf in the TLS handshake', async () => {
    const expired = pair(await issueTelemetryLeaf(issuer, NODE, new Date(Date.now() - 2 * DAY_MS)));
    await expect(
      postLogs(ports.http, serverCa, expired, exportRequest('http-expired')),
    ).rejects.toThrow(/alert certificate expired/);
  });

  it('requires the headers of the otel-logs-headers secret where they are configured', async () => {
    const without = await postLogs(
      ports.headersHttp,
      serverCa,
      telemetry,
      exportRequest('headers-missing'),
    );
    expect(without.status).toBe(401);
    const wrong = await postLogs(
      ports.headersHttp,
      serverCa,
      telemetry,
      exportRequest('headers-wrong'),
      { ...secretHeaders, Authorization: 'Bearer other' },
    );
    expect(wrong.status).toBe(401);
    const withHeaders = await postLogs(
      ports.headersHttp,
      serverCa,
      telemetry,
      exportRequest('headers-present'),
      secretHeaders,
    );
    expect(withHeaders.status).toBe(200);
    await waitFor(
      () => exported(outFile).find((r) => r.body === 'headers-present'),
      'the record in the exporter file',
      10_000,
    );
  });

  it('applies the same checks to OTLP/gRPC', async () => {
    const ok = await exportGrpc(ports.grpc, serverCa, telemetry, exportRequest('grpc-node'));
    expect(ok).toBeInstanceOf(Buffer);
    const pod = pair(
      await issueWorkloadLeaf(
        issuer,
        { cluster: CLUSTER, namespace: 'default', pod: 'web-7d9c-abcde' },
        new Date(),
      ),
    );
    const refused = await exportGrpc(ports.grpc, serverCa, pod, exportRequest('grpc-pod'));
    expect(refused).toMatchObject({ code: status.UNAUTHENTICATED });
    const noHeaders = await exportGrpc(
      ports.headersGrpc,
      serverCa,
      telemetry,
      exportRequest('grpc-headers-missing'),
    );
    expect(noHeaders).toMatchObject({ code: status.UNAUTHENTICATED });
    const withHeaders = await exportGrpc(
      ports.headersGrpc,
      serverCa,
      telemetry,
      exportRequest('grpc-headers-present'),
      secretHeaders,
    );
    expect(withHeaders).toBeInstanceOf(Buffer);
    await waitFor(
      () => exported(outFile).find((r) => r.body === 'grpc-headers-present'),
      'the gRPC record in the exporter file',
      10_000,
    );
  });

  it('exported exactly the accepted records and none of the refused ones', async () => {
    const bodies = await waitFor(
      () => {
        const all = exported(outFile).map((r) => r.body);
        return all.length >= 4 ? all.sort() : undefined;
      },
      'four exported records',
      10_000,
    );
    expect(bodies).toEqual(['grpc-headers-present', 'grpc-node', 'headers-present', 'http-node']);
  });
});

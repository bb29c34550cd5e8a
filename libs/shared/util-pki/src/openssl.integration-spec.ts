import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLOCK_SKEW_MARGIN_MS, HOUR_MS, systemClock } from './clock';
import type { IssuedCertificate } from './issue';
import { WorkloadCaKey, createWorkloadCaCertificate } from './workload-ca';
import type { WorkloadIssuer } from './workload-leaf';
import { issueWorkloadLeaf } from './workload-leaf';

const OPENSSL = '/usr/bin/openssl';
const run = promisify(execFile);
const openssl = async (...args: string[]): Promise<string> =>
  (await run(OPENSSL, args, { timeout: 10_000 })).stdout;

// A plain temporary directory: @podmin/testing seeds secrets with this library, so its specs
// cannot import that one back.
let dir: string;
let issuer: WorkloadIssuer;
let server: IssuedCertificate;
let client: IssuedCertificate;
let issuedAt: Date;
const file = (name: string): string => path.join(dir, name);

async function writeLeaf(name: string, leaf: IssuedCertificate): Promise<void> {
  await writeFile(file(`${name}.crt`), leaf.certificatePem);
  await writeFile(file(`${name}.key`), leaf.privateKeyPem, { mode: 0o600 });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'util-pki-openssl-'));
  const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, 42));
  // openssl checks validity against the real time, so these certificates start now.
  const now = systemClock.now();
  issuedAt = now;
  issuer = { certificate: await createWorkloadCaCertificate(key, 'prod', now), key };
  server = await issueWorkloadLeaf(
    issuer,
    { cluster: 'prod', namespace: 'shop', pod: 'api-0', service: 'api' },
    now,
  );
  client = await issueWorkloadLeaf(
    issuer,
    { cluster: 'prod', namespace: 'shop', pod: 'web-0' },
    now,
  );
  const foreignKey = WorkloadCaKey.fromSeed(Buffer.alloc(32, 43));
  const foreign = await issueWorkloadLeaf(
    { certificate: await createWorkloadCaCertificate(foreignKey, 'prod', now), key: foreignKey },
    { cluster: 'prod', namespace: 'shop', pod: 'intruder' },
    now,
  );
  await writeFile(file('ca.pem'), issuer.certificate.pem);
  await writeLeaf('server', server);
  await writeLeaf('client', client);
  await writeLeaf('foreign', foreign);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('workload certificates under real openssl', () => {
  it('verifies the chain for client and server purposes', async () => {
    expect(await openssl('verify', '-CAfile', file('ca.pem'), file('client.crt'))).toContain(
      ': OK',
    );
    expect(
      await openssl(
        'verify',
        '-purpose',
        'sslclient',
        '-CAfile',
        file('ca.pem'),
        file('client.crt'),
      ),
    ).toContain(': OK');
    expect(
      await openssl(
        'verify',
        '-purpose',
        'sslserver',
        '-CAfile',
        file('ca.pem'),
        file('server.crt'),
      ),
    ).toContain(': OK');
    await expect(
      openssl('verify', '-purpose', 'sslserver', '-CAfile', file('ca.pem'), file('client.crt')),
    ).rejects.toThrow(/unsuitable certificate purpose/);
    await expect(
      openssl('verify', '-CAfile', file('ca.pem'), file('foreign.crt')),
    ).rejects.toThrow();
  });

  it('accepts the chain on a verifier 60 s behind the issuer, not one beyond the margin', async () => {
    // `-attime` is the verifier's clock: a node running 60 s behind the node that issued.
    const at = (offsetMs: number): string =>
      String(Math.floor((issuedAt.getTime() + offsetMs) / 1000));
    expect(
      await openssl(
        'verify',
        '-attime',
        at(-60_000),
        '-CAfile',
        file('ca.pem'),
        file('server.crt'),
      ),
    ).toContain(': OK');
    await expect(
      openssl(
        'verify',
        '-attime',
        at(-CLOCK_SKEW_MARGIN_MS - 60_000),
        '-CAfile',
        file('ca.pem'),
        file('server.crt'),
      ),
    ).rejects.toThrow(/not yet valid/);
  });

  it('shows the CA as a one-year Ed25519 CA', async () => {
    const text = await openssl('x509', '-noout', '-text', '-in', file('ca.pem'));
    expect(text).toContain('Subject: CN = podmin workload CA prod');
    expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(text).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(text).toContain('Signature Algorithm: ED25519');
  });

  it('shows the spec names, usages and lifetime on a Service leaf', async () => {
    const text = await openssl('x509', '-noout', '-text', '-in', file('server.crt'));
    expect(text).toContain('Subject: CN = api-0');
    expect(text).toContain('Issuer: CN = podmin workload CA prod');
    expect(text).toContain('Public Key Algorithm: ED25519');
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature\n/);
    expect(text).toMatch(
      /Extended Key Usage: \s+TLS Web Client Authentication, TLS Web Server Authentication/,
    );
    expect(text).toMatch(
      /Subject Alternative Name: \s+URI:spiffe:\/\/prod\.podmin\.internal\/ns\/shop\/pod\/api-0, DNS:api\.shop\.svc\.cluster\.local, DNS:api\.shop\.svc, DNS:api\.shop\n/,
    );
    expect(text).toContain('X509v3 Subject Key Identifier');
    expect(text).toContain('X509v3 Authority Key Identifier');
    const clientText = await openssl('x509', '-noout', '-text', '-in', file('client.crt'));
    expect(clientText).toMatch(/Extended Key Usage: \s+TLS Web Client Authentication\n/);
    expect(clientText).not.toContain('DNS:');
    const dates = await openssl(
      'x509',
      '-noout',
      '-startdate',
      '-enddate',
      '-in',
      file('server.crt'),
    );
    const start = Date.parse(/notBefore=(.*)/.exec(dates)?.[1] ?? '');
    const end = Date.parse(/notAfter=(.*)/.exec(dates)?.[1] ?? '');
    // 24 h from the issue second, valid from the clock-skew margin before it.
    expect(end - start).toBe(24 * HOUR_MS + CLOCK_SKEW_MARGIN_MS);
    const fingerprint = await openssl(
      'x509',
      '-noout',
      '-fingerprint',
      '-sha256',
      '-in',
      file('server.crt'),
    );
    expect(fingerprint.trim().split('=')[1]?.replace(/:/g, '').toLowerCase()).toBe(
      server.certificate.fingerprint,
    );
  });

  it('reads the PKCS#8 key and matches it to the certificate', async () => {
    expect(await openssl('pkey', '-in', file('server.key'), '-noout', '-text')).toContain(
      'ED25519 Private-Key',
    );
    const fromKey = await openssl('pkey', '-in', file('server.key'), '-pubout');
    const fromCert = await openssl('x509', '-in', file('server.crt'), '-noout', '-pubkey');
    expect(fromKey).toBe(fromCert);
  });

  it('completes a mutually authenticated TLS 1.3 handshake between two leaves', async () => {
    await withServer(async (port, serverOut) => {
      const result = await runClient(port, 'client');
      expect(result.code).toBe(0);
      expect(result.out).toMatch(/Protocol version: TLSv1\.3/);
      expect(result.out).toContain('Verification: OK');
      expect(result.out).toContain('Verified peername: api.shop.svc');
      await waitFor(
        () => serverOut.text.includes('CN = web-0'),
        10_000,
        () => serverOut.text,
      );
      expect(serverOut.text).not.toMatch(/verify error/);
    });
  });

  it('refuses a client certificate from another CA', async () => {
    await withServer(async (port, serverOut) => {
      await runClient(port, 'foreign');
      await waitFor(
        () => /verify error|unable to get local issuer/i.test(serverOut.text),
        10_000,
        () => serverOut.text,
      );
    });
  });
});

/**
 * Runs a one-connection `openssl s_server` with the server leaf that demands a client
 * certificate from the CA, waits until it accepts, then hands its port and output to `body`;
 * the server is killed afterwards.
 */
async function withServer(
  body: (port: number, serverOut: { text: string }) => Promise<void>,
): Promise<void> {
  const port = await freePort();
  const serverProc = spawn(
    OPENSSL,
    [
      's_server',
      '-accept',
      `127.0.0.1:${port}`,
      '-tls1_3',
      '-cert',
      file('server.crt'),
      '-key',
      file('server.key'),
      '-CAfile',
      file('ca.pem'),
      '-Verify',
      '1',
      '-verify_return_error',
      '-naccept',
      '1',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  try {
    const serverOut = collect(serverProc);
    await waitFor(
      () => serverOut.text.includes('ACCEPT'),
      10_000,
      () => serverOut.text,
    );
    await body(port, serverOut);
  } finally {
    serverProc.kill('SIGKILL');
  }
}

/** Output of a child collected as it arrives. */
function collect(child: ChildProcess): { text: string } {
  const sink = { text: '' };
  child.stdout?.on('data', (d: Buffer) => (sink.text += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (sink.text += d.toString()));
  return sink;
}

/** Runs `openssl s_client` with a leaf, sends one line, and resolves with its output (10 s bound). */
function runClient(port: number, leaf: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      OPENSSL,
      [
        's_client',
        '-connect',
        `127.0.0.1:${port}`,
        '-tls1_3',
        '-cert',
        file(`${leaf}.crt`),
        '-key',
        file(`${leaf}.key`),
        '-CAfile',
        file('ca.pem'),
        '-verify_return_error',
        '-verify_hostname',
        'api.shop.svc',
        '-brief',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const out = collect(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.stdin?.end('ping\n');
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out: out.text });
    });
  });
}

/** Polls `done` every 20 ms until it holds or `ms` passes (then throws with `detail()`). */
async function waitFor(done: () => boolean, ms: number, detail: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out; output so far:\n${detail()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A loopback TCP port that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

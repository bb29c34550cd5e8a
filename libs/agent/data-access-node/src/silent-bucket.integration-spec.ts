import net from 'node:net';
import { parseAgentProcessConfig } from '@podmin/agent-util-config';
import { awsAgentArgs } from '@podmin/testing';
import { AGENT_AWS_TIMEOUTS } from './agent-provider';
import { openBucketStore } from './open';
import { AGENT_PROVIDERS } from './registry';

/**
 * A bucket that accepts connections and never answers (a stopped server, a black-holed path)
 * must fail an agent's request within the idle bound, after one attempt, so the loop that asked
 * retries on its own schedule instead of hanging or multiplying requests.
 */
describe('the agent bucket against a server that never answers (real loopback TCP)', () => {
  let server: net.Server;
  let connections = 0;
  const sockets = new Set<net.Socket>();

  const saved = { ...process.env };
  beforeAll(async () => {
    // The SDK resolves credentials from the process environment: static ones, never IMDS.
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIATEST',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    });
    delete process.env['AWS_PROFILE'];
    server = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    process.env = saved;
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fails a read after the idle bound, with one connection and no SDK retry', async () => {
    const { port } = server.address() as net.AddressInfo;
    const config = parseAgentProcessConfig(
      awsAgentArgs('podmin-demo', 'us-east-1', 'demo'),
      {
        PODMIN_NODE_ROOT: '/tmp',
        PODMIN_NODE_ID: 'node-1',
        PODMIN_NODE_ADDRESS: '2600:1f18:1:2::1',
      },
      AGENT_PROVIDERS,
    );
    const bucket = openBucketStore(config, {
      AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
    });
    const started = Date.now();
    const error = await bucket.get('dns/leader.json').then(
      () => undefined,
      (err: unknown) => err,
    );
    const tookMs = Date.now() - started;
    console.log(
      `silent bucket: read failed after ${tookMs} ms, ${connections} connection(s): ${String(error)}`,
    );
    expect(error).toBeInstanceOf(Error);
    expect(tookMs).toBeGreaterThanOrEqual(AGENT_AWS_TIMEOUTS.idleMs - 500);
    expect(tookMs).toBeLessThan(AGENT_AWS_TIMEOUTS.idleMs * 2);
    expect(connections).toBe(1);
    (bucket as unknown as { client: { destroy(): void } }).client.destroy();
  });
});

import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DNS_TTL_SECONDS } from '@podmin/agent-util-config';
import { JsonLogger } from '@podmin/agent-util-logging';
import { localAgentFlags } from '@podmin/testing';
import { DNS_TTL_MARGIN_MS, parseAgentArgs, runAgent, serviceSpecs } from './agent';
import { serviceEnv } from './launcher';
import { SHORT_SLICE_NS } from './scheduling';
import { STOP_GRACE_MS, stopBoundMs } from './supervisor';

const env = { PODMIN_NODE_ROOT: '/srv/node' };

describe('parseAgentArgs', () => {
  it('accepts exactly the six flags', () => {
    expect(parseAgentArgs(localAgentFlags, env)).toMatchObject({
      provider: 'local',
      nodegroup: 'default',
    });
    expect(parseAgentArgs(['--help'], env)).toBe('help');
  });

  it('rejects any other flag and names the allowed ones', () => {
    expect(() => parseAgentArgs([...localAgentFlags, '--verbose'], env)).toThrow(
      /--verbose[\s\S]*--provider, --bucket/,
    );
  });

  it('passes every service process the same six flags', () => {
    const config = parseAgentArgs(localAgentFlags, env);
    if (typeof config === 'string') throw new Error('expected config');
    expect(
      serviceSpecs(config, '/opt/podmin/bin').find((s) => s.name === 'registry'),
    ).toMatchObject({
      script: '/opt/podmin/bin/agent-registry.cjs',
      args: [
        '--provider',
        'local',
        '--bucket',
        '/b',
        '--region',
        'local',
        '--cluster',
        'demo',
        '--nodegroup',
        'default',
        '--ipv6-prefix',
        localAgentFlags[localAgentFlags.length - 1],
      ],
    });
  });

  it('runs the control-plane services lean and keeps the registry, DNS and dataplane fast', () => {
    const config = parseAgentArgs(localAgentFlags, env);
    if (typeof config === 'string') throw new Error('expected config');
    expect(
      Object.fromEntries(serviceSpecs(config, '/opt/podmin/bin').map((s) => [s.name, s.memory])),
    ).toEqual({
      staticpod: 'lean',
      coordinator: 'lean',
      dns: 'fast',
      identity: 'lean',
      registry: 'fast',
      dataplane: 'fast',
    });
  });

  it('gives agent-dns alone the short EEVDF slice', () => {
    const config = parseAgentArgs(localAgentFlags, env);
    if (typeof config === 'string') throw new Error('expected config');
    expect(
      serviceSpecs(config, '/opt/podmin/bin')
        .filter((s) => s.sliceNs !== undefined)
        .map((s) => [s.name, s.sliceNs]),
    ).toEqual([['dns', SHORT_SLICE_NS]]);
  });

  it('stops the dataplane last, after the services Pods depend on', () => {
    const config = parseAgentArgs(localAgentFlags, env);
    if (typeof config === 'string') throw new Error('expected config');
    const order = serviceSpecs(config, '/opt/podmin/bin')
      .sort((a, b) => a.stopOrder - b.stopOrder)
      .map((s) => s.name);
    expect(order).toEqual(['staticpod', 'coordinator', 'dns', 'registry', 'identity', 'dataplane']);
  });
});

describe('runAgent on aws', () => {
  const awsFlags = [
    ...['--provider', 'aws', '--bucket', 'podmin-demo', '--region', 'us-east-1'],
    ...['--cluster', 'demo', '--nodegroup', 'default'],
    ...['--ipv6-prefix', '2600:1f14:abc:1200:1::/80'],
  ];

  /** An IMDSv2 stand-in on loopback with one primary ENI holding `ipv6s` (none: no device 0). */
  async function imds(ipv6s: string | undefined) {
    const server = http.createServer((req, res) => {
      const base = '/latest/meta-data/network/interfaces/macs/';
      const answers: Record<string, string> = {
        '/latest/api/token': 't',
        [base]: ipv6s === undefined ? 'aa/\n' : 'aa/\nbb/\n',
        '/latest/meta-data/instance-id': 'i-0123456789abcdef0',
        [`${base}aa/device-number`]: '1',
        [`${base}aa/ipv6s`]: '2600:1f14:abc:1200::99',
        ...(ipv6s === undefined
          ? {}
          : { [`${base}bb/device-number`]: '0', [`${base}bb/ipv6s`]: ipv6s }),
      };
      const answer = answers[req.url ?? ''];
      const authorized =
        req.url === '/latest/api/token' || req.headers['x-aws-ec2-metadata-token'] === 't';
      res.writeHead(answer !== undefined && authorized ? 200 : 404);
      res.end(answer ?? '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  /** Runs the agent in-process with an empty service directory, returning its code and log. */
  async function run(env: Record<string, string>) {
    const lines: Array<Record<string, unknown>> = [];
    const log = new JsonLogger({
      write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-agent-empty-'));
    try {
      const code = await runAgent(
        awsFlags,
        { serviceDir: dir, env, cleanPages: false },
        'test',
        log,
      );
      return { code, lines };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it("reads the node address (the primary ENI's) and the node ID (the instance ID) from IMDS for every service", async () => {
    const server = await imds('2600:1f14:abc:1200::10\n');
    try {
      // No service programs here: the agent stops right after reading the node's facts.
      const { code, lines } = await run({ AWS_EC2_METADATA_SERVICE_ENDPOINT: server.endpoint });
      expect(code).toBe(1);
      expect(lines.map((l) => l['msg'])).toEqual(['read node facts', 'missing service programs']);
      expect(lines[0]).toMatchObject({
        nodeAddress: '2600:1f14:abc:1200::10',
        nodeId: 'i-0123456789abcdef0',
        variables: 'PODMIN_NODE_ADDRESS,PODMIN_NODE_ID',
      });
    } finally {
      await server.close();
    }
  });

  it('exits 1 naming why when IMDS has no primary ENI address', async () => {
    const server = await imds(undefined);
    try {
      const { code, lines } = await run({ AWS_EC2_METADATA_SERVICE_ENDPOINT: server.endpoint });
      expect(code).toBe(1);
      expect(lines).toEqual([
        expect.objectContaining({
          msg: 'read node facts',
          level: 'error',
          error: expect.stringContaining('no network interface with device number 0') as unknown,
        }),
      ]);
    } finally {
      await server.close();
    }
  });

  it('hands every service process the facts it read', () => {
    const config = parseAgentArgs(awsFlags, { PODMIN_NODE_ADDRESS: '2600::10' });
    if (typeof config === 'string') throw new Error('expected config');
    const facts = {
      PODMIN_NODE_ADDRESS: '2600::10',
      AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE: 'IPv6',
    };
    for (const spec of serviceSpecs(config, '/opt/podmin/bin', facts)) {
      expect(serviceEnv(spec, { PATH: '/bin', PODMIN_NODE_ADDRESS: '::1' })).toMatchObject({
        PATH: '/bin',
        ...facts,
      });
    }
  });
});

describe('the shutdown order', () => {
  const config = parseAgentArgs(localAgentFlags, env);
  if (typeof config === 'string') throw new Error('expected config');
  const specs = serviceSpecs(config, '/opt/podmin/bin');

  it('waits the DNS TTL margin after the coordinator drained, before DNS and the dataplane stop', () => {
    const ordered = [...specs].sort((a, b) => a.stopOrder - b.stopOrder);
    const paused = ordered.filter((s) => s.pauseAfterStop !== undefined);
    expect(paused.map((s) => [s.name, s.pauseAfterStop])).toEqual([
      ['coordinator', { ms: DNS_TTL_MARGIN_MS, why: 'wait DNS TTL margin' }],
    ]);
    expect(ordered.at(-1)?.name).toBe('dataplane');
  });

  it("derives the margin from agent-dns's one TTL constant, so changing it changes both", () => {
    // dns-zone.spec.ts in feature-dns shows the answers carry the same DNS_TTL_SECONDS.
    expect(DNS_TTL_MARGIN_MS).toBe(DNS_TTL_SECONDS * 1000);
    expect(DNS_TTL_SECONDS).toBe(5);
  });

  /** The `[Service]` section of podmin-agent.service as userdata/aws.sh writes it. */
  const agentUnit = (): string => {
    const script = fs.readFileSync(path.resolve(__dirname, '../../../../userdata/aws.sh'), 'utf8');
    const from = script.indexOf('/etc/systemd/system/podmin-agent.service');
    return script.slice(from, script.indexOf('\nEOF\n', from));
  };

  it("fits in the systemd unit's TimeoutStopSec with room for the supervisor itself", () => {
    const seconds = Number(/^TimeoutStopSec=(\d+)$/m.exec(agentUnit())?.[1]);
    expect(stopBoundMs(specs)).toBe(6 * STOP_GRACE_MS + DNS_TTL_MARGIN_MS);
    expect(seconds * 1000).toBeGreaterThanOrEqual(stopBoundMs(specs) + 10_000);
  });

  it('has systemd signal the supervisor alone on stop (KillMode=mixed), SIGKILL to all only after the timeout', () => {
    // control-group (the default) would SIGTERM every service at once; process would leave the
    // services running after a hung supervisor, never SIGKILLed.
    expect(agentUnit().match(/^KillMode=.*$/gm)).toEqual(['KillMode=mixed']);
    expect(agentUnit()).not.toMatch(/^(KillSignal|SendSIGKILL|ExecStop)=/m);
  });
});

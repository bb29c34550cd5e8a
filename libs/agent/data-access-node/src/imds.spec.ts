import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PodminError } from '@podmin/util-errors';
import { awsAgentProvider } from './aws.provider';
import { IMDS_IPV6_ENDPOINT, readNodeFacts, readPrimaryEniIpv6 } from './imds';

/** One ENI as IMDS lists it. */
interface Eni {
  mac: string;
  device: string;
  ipv6s?: string;
}

/**
 * A small IMDSv2 on loopback: a session token from `PUT /latest/api/token`, then the network
 * items under `/latest/meta-data/network/interfaces/macs/`, each refused (401) without the
 * token, 404 for what the instance does not have.
 */
async function startImds(enis: Eni[], options: { failFirst?: number } = {}) {
  const token = 'token-' + Math.random().toString(16).slice(2);
  const requests: string[] = [];
  let failures = options.failFirst ?? 0;
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const send = (status: number, body = '') => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(body);
    };
    if (failures > 0) {
      failures--;
      return send(503);
    }
    if (req.url === '/latest/api/token') {
      if (req.method !== 'PUT' || !req.headers['x-aws-ec2-metadata-token-ttl-seconds'])
        return send(400);
      return send(200, token);
    }
    if (req.headers['x-aws-ec2-metadata-token'] !== token) return send(401);
    if (req.method === 'GET' && req.url === '/latest/meta-data/instance-id')
      return send(200, 'i-0123456789abcdef0');
    const prefix = '/latest/meta-data/network/interfaces/macs/';
    if (req.method !== 'GET' || !req.url?.startsWith(prefix)) return send(404);
    const rest = req.url.slice(prefix.length);
    if (rest === '') return send(200, enis.map((e) => `${e.mac}/`).join('\n'));
    const [mac, item] = rest.split('/');
    const eni = enis.find((e) => e.mac === mac);
    if (eni === undefined) return send(404);
    if (item === 'device-number') return send(200, eni.device);
    if (item === 'ipv6s' && eni.ipv6s !== undefined) return send(200, eni.ipv6s);
    return send(404);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const POD_ENI = { mac: '0a:00:00:00:00:02', device: '1', ipv6s: '2600:1f14:abc:1200::99\n' };
const PRIMARY = {
  mac: '0a:00:00:00:00:01',
  device: '0',
  ipv6s: '2600:1f14:abc:1200:0:0:0:10\n2600:1f14:abc:1200::11\n',
};

describe('readPrimaryEniIpv6', () => {
  it("reads the primary ENI's first IPv6 with an IMDSv2 token, not another interface's", async () => {
    // The Pod ENI is listed first, as IMDS may list it.
    const imds = await startImds([POD_ENI, PRIMARY]);
    try {
      expect(await readNodeFacts({ endpoint: imds.endpoint })).toEqual({
        address: '2600:1f14:abc:1200::10',
        instanceId: 'i-0123456789abcdef0',
      });
      expect(imds.requests[0]).toBe('PUT /latest/api/token');
      expect(imds.requests.filter((r) => r.startsWith('PUT'))).toHaveLength(1);
      expect(imds.requests).toContain(
        `GET /latest/meta-data/network/interfaces/macs/${PRIMARY.mac}/ipv6s`,
      );
      expect(imds.requests).not.toContain(
        `GET /latest/meta-data/network/interfaces/macs/${POD_ENI.mac}/ipv6s`,
      );
    } finally {
      await imds.close();
    }
  });

  it('retries while IMDS fails, then answers', async () => {
    const imds = await startImds([PRIMARY], { failFirst: 2 });
    try {
      expect(
        await readPrimaryEniIpv6({ endpoint: imds.endpoint, retryDelayMs: 10, attempts: 3 }),
      ).toBe('2600:1f14:abc:1200::10');
    } finally {
      await imds.close();
    }
  });

  it('is SERVICE_UNAVAILABLE when IMDS stays unreachable, after its attempts', async () => {
    const imds = await startImds([PRIMARY], { failFirst: 100 });
    try {
      const err = await readPrimaryEniIpv6({
        endpoint: imds.endpoint,
        retryDelayMs: 5,
        attempts: 3,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PodminError);
      expect((err as PodminError).code).toBe('SERVICE_UNAVAILABLE');
      expect(imds.requests).toHaveLength(3);
    } finally {
      await imds.close();
    }
  });

  it.each([
    ['no IPv6 on the primary ENI', [POD_ENI, { mac: PRIMARY.mac, device: '0' }]],
    ['a non-global first address', [{ ...PRIMARY, ipv6s: 'fd00::10\n' }]],
    ['no device 0', [POD_ENI]],
  ])('is NOT_FOUND at once for %s', async (_why, enis) => {
    const imds = await startImds(enis);
    try {
      const err = await readPrimaryEniIpv6({ endpoint: imds.endpoint, attempts: 5 }).catch(
        (e: unknown) => e,
      );
      expect((err as PodminError).code).toBe('NOT_FOUND');
      expect(imds.requests.filter((r) => r.startsWith('PUT'))).toHaveLength(1);
    } finally {
      await imds.close();
    }
  });

  it('defaults to the IPv6 IMDS endpoint', () => {
    expect(IMDS_IPV6_ENDPOINT).toBe('http://[fd00:ec2::254]');
  });
});

describe('awsAgentProvider.startEnvironment', () => {
  it('gives the services the node address and ID from IMDS and IMDS on IPv6 for SDK credentials', async () => {
    const imds = await startImds([POD_ENI, PRIMARY]);
    try {
      expect(
        await awsAgentProvider.startEnvironment?.({
          AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.endpoint,
        }),
      ).toEqual({
        PODMIN_NODE_ADDRESS: '2600:1f14:abc:1200::10',
        PODMIN_NODE_ID: 'i-0123456789abcdef0',
      });
    } finally {
      await imds.close();
    }
    // Nothing set: the SDK is told to use IMDS's IPv6 endpoint, which is also read here.
    const unreachable = awsAgentProvider.startEnvironment?.({
      PODMIN_NODE_ADDRESS: '2600::1',
      PODMIN_NODE_ID: 'i-0123456789abcdef0',
    });
    await expect(unreachable).resolves.toEqual({ AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE: 'IPv6' });
  });
});

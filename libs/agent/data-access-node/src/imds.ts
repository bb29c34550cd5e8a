import http from 'node:http';
import { PodminError } from '@podmin/util-errors';
import { formatIpv6, parseIpv6 } from '@podmin/util-names';

/**
 * The instance metadata service on its IPv6 address: nodes are IPv6-only, so the IPv4
 * 169.254.169.254 is unreachable there (the launch template enables the IPv6 endpoint).
 */
export const IMDS_IPV6_ENDPOINT = 'http://[fd00:ec2::254]';

/**
 * The variable that moves IMDS elsewhere: the AWS SDK's own, so the SDK's instance credentials
 * and the node address are read from the same service (an emulator on loopback in tests).
 */
export const IMDS_ENDPOINT_VARIABLE = 'AWS_EC2_METADATA_SERVICE_ENDPOINT';

/** How to reach IMDS and how long to keep trying. */
export interface ImdsOptions {
  /** Base URL, `http://[fd00:ec2::254]` by default. */
  readonly endpoint?: string;
  /** Deadline of one request (default 2 s). */
  readonly timeoutMs?: number;
  /** Attempts of the whole read before giving up (default 5), one second apart, doubling. */
  readonly attempts?: number;
  /** The first wait between attempts (default 1 s). */
  readonly retryDelayMs?: number;
}

const DOING = 'reading the node address and instance ID from IMDS';

/** What a node learns about itself from IMDS. */
export interface NodeFacts {
  /** The primary ENI's first IPv6 address: the node address. */
  readonly address: string;
  /** The instance ID (`i-…`): the node ID, the key of its receipt. */
  readonly instanceId: string;
}

/**
 * Reads the node's facts from IMDSv2 with one session token: the primary ENI (device number 0)
 * and its first IPv6 address, and the instance ID. Retries transient failures; an instance
 * without a global IPv6 on its primary ENI fails at once with NOT_FOUND.
 */
export async function readNodeFacts(options: ImdsOptions = {}): Promise<NodeFacts> {
  const attempts = options.attempts ?? 5;
  let delay = options.retryDelayMs ?? 1_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await readOnce(options.endpoint ?? IMDS_IPV6_ENDPOINT, options.timeoutMs ?? 2_000);
    } catch (err) {
      // An answer without a primary IPv6 is a fact about this instance, not a transient fault.
      if (attempt >= attempts || (err instanceof PodminError && err.code === 'NOT_FOUND'))
        throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay *= 2;
    }
  }
}

/** The node address alone (see {@link readNodeFacts}). */
export async function readPrimaryEniIpv6(options: ImdsOptions = {}): Promise<string> {
  return (await readNodeFacts(options)).address;
}

async function readOnce(endpoint: string, timeoutMs: number): Promise<NodeFacts> {
  const base = endpoint.replace(/\/+$/, '');
  const token = await request('PUT', `${base}/latest/api/token`, timeoutMs, {
    // The token lives just long enough for this read.
    'X-aws-ec2-metadata-token-ttl-seconds': '60',
  });
  const get = (item: string) =>
    request('GET', `${base}/latest/meta-data/${item}`, timeoutMs, {
      'X-aws-ec2-metadata-token': token,
    });
  const macs = lines(await get('network/interfaces/macs/')).map((m) => m.replace(/\/$/, ''));
  for (const mac of macs) {
    if ((await get(`network/interfaces/macs/${mac}/device-number`)).trim() !== '0') continue;
    const first = lines(await get(`network/interfaces/macs/${mac}/ipv6s`))[0] ?? '';
    const groups = parseIpv6(first);
    if (groups === undefined || ((groups[0] as number) & 0xe000) !== 0x2000)
      throw new PodminError(
        'NOT_FOUND',
        `${DOING}: the primary network interface ${mac} has no global IPv6 address (got ${JSON.stringify(first)})`,
        { hint: 'launch nodes in an IPv6 subnet that assigns the primary ENI an IPv6 address' },
      );
    const instanceId = (await get('instance-id')).trim();
    if (!/^i-[0-9a-f]{8,17}$/.test(instanceId))
      throw new PodminError(
        'NOT_FOUND',
        `${DOING}: IMDS answered instance-id ${JSON.stringify(instanceId)}, not an instance ID`,
      );
    return { address: formatIpv6(groups), instanceId };
  }
  throw new PodminError(
    'NOT_FOUND',
    `${DOING}: no network interface with device number 0 among ${macs.length}`,
  );
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** One IMDS request on node:http (the global fetch is missing from lean service processes). */
function request(
  method: 'GET' | 'PUT',
  url: string,
  timeoutMs: number,
  headers: Record<string, string>,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const fail = (why: string, cause?: unknown) =>
      reject(
        new PodminError('SERVICE_UNAVAILABLE', `${DOING}: ${method} ${url}: ${why}`, {
          cause,
          hint: 'enable the IPv6 IMDS endpoint (HttpProtocolIpv6) with tokens on the instance',
        }),
      );
    const req = http.request(url, { method, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => fail(err.message, err));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode === 200) resolve(body);
        else if (res.statusCode === 404)
          reject(new PodminError('NOT_FOUND', `${DOING}: ${method} ${url}: no such item`));
        else fail(`status ${res.statusCode ?? 'unknown'}`);
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => fail(err.message, err));
    req.end();
  });
}

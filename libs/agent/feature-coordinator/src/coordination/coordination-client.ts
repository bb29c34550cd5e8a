import type { ServiceError } from '@grpc/grpc-js';
import type { coordination } from '@podmin/agent-contracts';
import { podminErrorOf } from '@podmin/agent-data-access-grpc';
import { clusterTrustDomain } from '@podmin/util-pki';
import { CoordinationError } from './coordination-error';
import { coordinationService, normalizeResponse } from './coordination-proto';
import type { CoordinationClientCredentials } from './credentials';
import { canonicalIpv6 } from './peer-identity';

/** Per-call options of a coordination call. */
export interface CoordinationCallOptions {
  /** Deadline of the call (default 5 s, one poll interval). */
  readonly timeoutMs?: number;
}

/** A follower's client of the leader's Coordination service. */
export interface CoordinationClient {
  /** `[ipv6]:port` dialled. */
  readonly address: string;
  /** Reports to the leader; failures are PodminErrors keeping the server's code. */
  hello(
    request: coordination.HelloRequest,
    options?: CoordinationCallOptions,
  ): Promise<coordination.HelloResponse>;
  /** Closes the channel. */
  close(): void;
}

type UnaryMethod = (
  request: unknown,
  options: { deadline: Date },
  callback: (err: ServiceError | null, response: coordination.HelloResponse) => void,
) => void;

/**
 * Dials a leader's coordination server at `leaderAddr` (`[ipv6]:port`, as `leaderAddr` in
 * `dns/leader.json`): TLS 1.3 with our leaf, the server verified under the cluster CA, in our
 * trust domain and carrying the dialled address as IP SAN.
 */
export function dialCoordination(
  leaderAddr: string,
  credentials: CoordinationClientCredentials,
): CoordinationClient {
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(leaderAddr);
  const host = match ? canonicalIpv6(match[1] ?? '') : undefined;
  const port = Number(match?.[2]);
  if (!match || host === undefined || !(port >= 1 && port <= 65535)) {
    throw new CoordinationError(
      'INVALID_ARGUMENT',
      `dialling coordination: ${JSON.stringify(leaderAddr)} is not [ipv6]:port`,
    );
  }
  const address = `[${host}]:${port}`;
  const { Client } = coordinationService();
  const client = new Client(address, credentials.forAddress(host), {
    // SNI must not carry an IP (RFC 6066); the certificate check is by address, not this name.
    'grpc.ssl_target_name_override': clusterTrustDomain(credentials.cluster),
  });
  const method = (client as unknown as { hello: UnaryMethod }).hello;
  return {
    address,
    hello: (request, options = {}) =>
      new Promise((resolve, reject) => {
        const deadline = new Date(Date.now() + (options.timeoutMs ?? 5000));
        method.call(client, request, { deadline }, (err, response) => {
          if (err) reject(podminErrorOf(err, `calling Coordination.Hello on ${address}`));
          else resolve(normalizeResponse(response));
        });
      }),
    close: () => client.close(),
  };
}

import { credentials, status, type Client, type ServiceError } from '@grpc/grpc-js';
import type { Observable } from 'rxjs';
import {
  AGENT_PROTO_PACKAGE,
  AGENT_SERVICES,
  agentProtoService,
  type AgentClients,
  type AgentServiceName,
} from '@podmin/agent-contracts';
import { PodminError, isPodminErrorCode, type PodminErrorCode } from '@podmin/util-errors';
import { PODMIN_CODE_TRAILER } from './grpc-error.filter';

/** Maps a gRPC status to a podmin error code, for failures that carry no podmin code trailer. */
export function podminCodeOf(code: status): PodminErrorCode {
  switch (code) {
    case status.INVALID_ARGUMENT:
      return 'INVALID_ARGUMENT';
    case status.NOT_FOUND:
      return 'NOT_FOUND';
    case status.ALREADY_EXISTS:
      return 'ALREADY_EXISTS';
    case status.FAILED_PRECONDITION:
      return 'PRECONDITION_FAILED';
    case status.PERMISSION_DENIED:
      return 'ACCESS_DENIED';
    case status.RESOURCE_EXHAUSTED:
      return 'OBJECT_TOO_LARGE';
    case status.ABORTED:
      return 'CONFLICT_RETRIES_EXHAUSTED';
    case status.UNAVAILABLE:
    case status.DEADLINE_EXCEEDED:
    case status.CANCELLED:
      return 'SERVICE_UNAVAILABLE';
    default:
      return 'INTERNAL';
  }
}

/**
 * The PodminError a failed call means for its caller: the server's own code when it sent one
 * (the error filter's trailer), else one derived from the gRPC status (transport failures).
 */
export function podminErrorOf(err: ServiceError, what: string): PodminError {
  const trailer = err.metadata?.get(PODMIN_CODE_TRAILER)[0];
  const code = isPodminErrorCode(trailer) ? trailer : podminCodeOf(err.code);
  return new PodminError(code, `${what}: ${err.details || err.message}`, { cause: err });
}

/** Per-call options. */
export interface CallOptions {
  /** Deadline of the call (default 10 s). */
  timeoutMs?: number;
}

/**
 * A generated ts-proto client interface with each `Observable` method turned into a promise, so
 * method names and message types are checked against the contract at compile time.
 */
export type PromiseClient<T> = {
  [K in keyof T]: T[K] extends (request: infer Req) => Observable<infer Res>
    ? (request: Req, options?: CallOptions) => Promise<Res>
    : never;
};

/** A typed client of one agent service process over its Unix socket. */
export type AgentClient<N extends AgentServiceName> = PromiseClient<AgentClients[N]> & {
  /** Closes the channel. */
  close(): void;
};

type ClientConstructor = new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => Client;

type UnaryMethod = (
  request: unknown,
  options: { deadline: Date },
  callback: (err: ServiceError | null, response: unknown) => void,
) => void;

/**
 * Opens a client of the agent service `name` listening on `socketPath`; failures are PodminErrors
 * that keep the code the server threw.
 */
export function agentClient<N extends AgentServiceName>(
  name: N,
  socketPath: string,
): AgentClient<N> {
  const contract = AGENT_SERVICES[name];
  // Decoded as the generated types say (the contracts' one set of proto-loader options).
  const node = agentProtoService(contract.protoFile, `${AGENT_PROTO_PACKAGE}.${contract.service}`);
  if (node === undefined)
    throw new PodminError(
      'INTERNAL',
      `loading ${contract.protoFile}: no service ${contract.service}`,
    );
  // Unix sockets in the runtime directory are reachable only by the agent's user (mode 0600).
  const client = new (node as ClientConstructor)(
    `unix://${socketPath}`,
    credentials.createInsecure(),
  );
  const methods = client as unknown as Record<string, UnaryMethod>;
  const call =
    (method: string) =>
    (request: unknown, options: CallOptions = {}): Promise<unknown> =>
      new Promise((resolve, reject) => {
        const deadline = new Date(Date.now() + (options.timeoutMs ?? 10_000));
        methods[method]?.call(client, request, { deadline }, (err, response) => {
          if (err) reject(podminErrorOf(err, `calling ${contract.service}.${method}`));
          else resolve(response);
        });
      });
  return new Proxy({} as AgentClient<N>, {
    get(_target, property) {
      if (property === 'close') return () => client.close();
      if (typeof property !== 'string' || typeof methods[property] !== 'function') return undefined;
      return call(property);
    },
  });
}

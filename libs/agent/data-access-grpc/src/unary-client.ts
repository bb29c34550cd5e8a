import path from 'node:path';
import {
  credentials,
  loadPackageDefinition,
  status,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { AGENT_PROTO_PACKAGE, protoRoot } from '@podmin/agent-contracts';
import { PodminError, type PodminErrorCode } from '@podmin/util-errors';

/** Maps a gRPC status back to a podmin error code (the inverse of the service's filter). */
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
    case status.UNAVAILABLE:
    case status.DEADLINE_EXCEEDED:
    case status.CANCELLED:
      return 'SERVICE_UNAVAILABLE';
    default:
      return 'INTERNAL';
  }
}

/** A promise-based client of one agent contract service over its Unix socket. */
export interface UnaryClient {
  /** Calls `method` (lowerCamel, as generated) with a deadline. */
  call<Req extends object, Res>(method: string, request: Req, timeoutMs?: number): Promise<Res>;
  close(): void;
}

type ClientConstructor = new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => Client;

/** Opens a client of `service` (e.g. `Identity`) defined in `protoFile`, talking to `unix://socket`. */
export function unaryClient(protoFile: string, service: string, socketPath: string): UnaryClient {
  const root = protoRoot();
  const definition = loadSync(path.join(root, protoFile), {
    includeDirs: [root],
    keepCase: false,
    defaults: true,
    longs: String,
  });
  const pkg = loadPackageDefinition(definition) as unknown as Record<
    string,
    Record<string, Record<string, Record<string, ClientConstructor>>>
  >;
  const [a, b, c] = AGENT_PROTO_PACKAGE.split('.') as [string, string, string];
  const Ctor = pkg[a]?.[b]?.[c]?.[service];
  if (!Ctor) throw new PodminError('INTERNAL', `loading ${protoFile}: no service ${service}`);
  // Unix sockets in the runtime directory are reachable only by the agent's user (mode 0600).
  const client = new Ctor(`unix://${socketPath}`, credentials.createInsecure());
  return {
    call<Req extends object, Res>(method: string, request: Req, timeoutMs = 10_000): Promise<Res> {
      const fn = (
        client as unknown as Record<
          string,
          (
            req: Req,
            opts: { deadline: Date },
            cb: (err: ServiceError | null, res: Res) => void,
          ) => void
        >
      )[method];
      if (typeof fn !== 'function')
        return Promise.reject(
          new PodminError('INTERNAL', `calling ${service}.${method}: no such method`),
        );
      return new Promise((resolve, reject) => {
        fn.call(client, request, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
          if (err)
            reject(
              new PodminError(
                'SERVICE_UNAVAILABLE',
                `calling ${service}.${method} on ${socketPath}: ${err.details || err.message}`,
                { cause: err },
              ),
            );
          else resolve(res);
        });
      });
    },
    close: () => client.close(),
  };
}

import type net from 'node:net';
import tls from 'node:tls';
import type { TLSSocket } from 'node:tls';
import {
  Metadata,
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerErrorResponse,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import type { coordination } from '@podmin/agent-contracts';
import { PODMIN_CODE_TRAILER, grpcStatusOf } from '@podmin/agent-data-access-grpc';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { PodminError } from '@podmin/util-errors';
import type { CoordinationPeer, HelloHandler } from '../coordinator.ports';
import { CoordinationError } from './coordination-error';
import { coordinationService, reportOf, responseOf } from './coordination-proto';
import type { CoordinationServerCredentials } from './credentials';
import { canonicalIpv6, peerIdentity } from './peer-identity';
import { errorMessage } from '../error-message';

/** Where and how to serve coordination. */
export interface CoordinationServerOptions {
  /** The node's IPv6 address (any text form), e.g. `::1` in tests. */
  readonly host: string;
  /** 8081 in a cluster; 0 picks a free port. */
  readonly port: number;
  readonly credentials: CoordinationServerCredentials;
  readonly handler: HelloHandler;
  /** Peers must carry a node SPIFFE ID of this cluster. */
  readonly cluster: string;
  /** Every refusal is one `refuse coordination peer` warning. */
  readonly log: StructuredLogger;
  /** A TLS handshake not finished within this is dropped (default 10 s). */
  readonly handshakeTimeoutMs?: number;
  /** Open connections get this long to finish on close (default 1 s). */
  readonly closeGraceMs?: number;
}

/** A running coordination server. */
export interface CoordinationServer {
  /** `[ipv6]:port`, as followers dial it and `leaderAddr` records it. */
  readonly address: string;
  readonly port: number;
  /** Stops accepting, lets open calls finish within the grace, then closes everything. */
  close(): Promise<void>;
}

/** Where a refusal happened: in the TLS handshake, or in a Hello after it. */
type RefusalStage = 'handshake' | 'connection' | 'hello';

/**
 * Serves the Coordination gRPC service on `[host]:port` with mutual TLS 1.3 under the cluster
 * CA. TLS is terminated by a `tls.Server` of ours, whose handshakes are observable (another CA,
 * TLS 1.2, an expired leaf and a missing client certificate are each logged), and each
 * established connection is injected into a plain grpc-js Server (gRFC L114). A Hello is
 * authorized by the peer's SPIFFE URI and must name the certificate's node and NodeGroup.
 */
export async function startCoordinationServer(
  options: CoordinationServerOptions,
): Promise<CoordinationServer> {
  const { credentials, handler, cluster, log } = options;
  const host = canonicalIpv6(options.host);
  if (host === undefined) {
    throw new CoordinationError(
      'INVALID_ARGUMENT',
      `serving coordination: host ${JSON.stringify(options.host)} is not an IPv6 address`,
    );
  }
  const refuse = (
    stage: RefusalStage,
    reason: string,
    remoteAddress: string | undefined,
    fields: Record<string, unknown> = {},
  ): void => {
    log.event('warn', 'refuse coordination peer', {
      stage,
      reason,
      remoteAddress: remoteAddress ?? 'unknown',
      ...fields,
    });
  };

  const grpcServer = new Server();
  grpcServer.addService(coordinationService().definition, {
    hello: (
      call: ServerUnaryCall<coordination.HelloRequest, coordination.HelloResponse>,
      callback: sendUnaryData<coordination.HelloResponse>,
    ) => {
      void hello(call).then(
        (response) => callback(null, response),
        (err: unknown) => callback(errorResponse(err, log)),
      );
    },
  });

  async function hello(
    call: ServerUnaryCall<coordination.HelloRequest, coordination.HelloResponse>,
  ): Promise<coordination.HelloResponse> {
    const remoteAddress = remoteOf(call.getPeer());
    let peer: CoordinationPeer;
    try {
      peer = { ...peerIdentity(call.getAuthContext().sslPeerCertificate, cluster), remoteAddress };
    } catch (err) {
      refuse('hello', errorMessage(err), remoteAddress);
      throw err;
    }
    const report = reportOf(call.request);
    if (report.nodeId !== peer.nodeId || report.nodegroup !== peer.nodegroup) {
      const reason = `Hello names node ${JSON.stringify(report.nodeId)} of NodeGroup ${JSON.stringify(report.nodegroup)} but the certificate names node ${peer.nodeId} of NodeGroup ${peer.nodegroup}`;
      refuse('hello', reason, remoteAddress, { node: peer.nodeId });
      throw new CoordinationError('ACCESS_DENIED', `authorizing coordination peer: ${reason}`, {
        fault: 'user',
      });
    }
    try {
      return responseOf(await handler.hello(peer, report));
    } catch (err) {
      if (
        err instanceof PodminError &&
        (err.code === 'ACCESS_DENIED' || err.code === 'INVALID_ARGUMENT')
      )
        refuse('hello', err.message, remoteAddress, { node: peer.nodeId });
      throw err;
    }
  }

  // The TLS is ours: grpc-js gets decrypted, authenticated sockets, so it is given no TLS.
  const injector = grpcServer.createConnectionInjector(ServerCredentials.createInsecure());
  const secure = {
    ...credentials._getConstructorOptions(),
    ...credentials._getSecureContextOptions(),
  };
  const tlsServer = tls.createServer({
    ...secure,
    requestCert: true,
    // Node would drop an unverified client silently; checking in secureConnection below
    // refuses the same connections and can say why (another CA, expired, no certificate).
    rejectUnauthorized: false,
    ALPNProtocols: ['h2'],
    handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
  });
  const watcher = (context: tls.SecureContextOptions | null): void => {
    if (context === null) return;
    try {
      tlsServer.setSecureContext(context);
    } catch (err) {
      log.event('error', 'apply coordination leaf failed', { error: errorMessage(err) });
    }
  };
  credentials._addWatcher(watcher);

  const remoteBySocket = new WeakMap<net.Socket, string>();
  const open = new Set<TLSSocket>();
  tlsServer.prependListener('connection', (raw: net.Socket) => {
    const remote = remoteText(raw.remoteAddress);
    if (remote !== undefined) remoteBySocket.set(raw, remote);
  });
  tlsServer.on('tlsClientError', (err: Error & { code?: string }, socket: TLSSocket) => {
    const raw = (socket as unknown as { _parent?: net.Socket })._parent;
    const remoteAddress =
      (raw && remoteBySocket.get(raw)) ?? remoteText(socket.remoteAddress) ?? undefined;
    refuse('handshake', err.message, remoteAddress, { code: err.code ?? 'unknown' });
  });
  tlsServer.on('secureConnection', (socket: TLSSocket) => {
    const remoteAddress = remoteText(socket.remoteAddress);
    if (!socket.authorized) {
      const presented = socket.getPeerCertificate().raw !== undefined;
      const reason = presented
        ? describeVerifyError(socket.authorizationError)
        : 'no client certificate presented';
      refuse('handshake', reason, remoteAddress, {
        code: String(socket.authorizationError),
      });
      socket.destroy();
      return;
    }
    if (socket.alpnProtocol !== 'h2') {
      refuse('connection', 'the client did not negotiate ALPN h2', remoteAddress);
      socket.destroy();
      return;
    }
    // A connection error after the handshake (reset, bad frames) must not escape as a crash.
    socket.on('error', () => undefined);
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    injector.injectConnection(socket);
  });

  await new Promise<void>((resolve, reject) => {
    tlsServer.once('error', reject);
    tlsServer.listen({ host, port: options.port, ipv6Only: true }, () => {
      tlsServer.off('error', reject);
      resolve();
    });
  });
  tlsServer.on('error', (err: Error) =>
    log.event('error', 'coordination server error', { error: err.message }),
  );
  const port = (tlsServer.address() as net.AddressInfo).port;
  const address = `[${host}]:${port}`;
  log.event('info', 'serve coordination', { address });

  let closing: Promise<void> | undefined;
  return {
    address,
    port,
    close: () =>
      (closing ??= (async () => {
        credentials._removeWatcher(watcher);
        const closed = new Promise<void>((resolve) => tlsServer.close(() => resolve()));
        const grace = options.closeGraceMs ?? 1000;
        injector.drain(grace);
        const deadline = Date.now() + grace;
        while (open.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        for (const socket of open) socket.destroy();
        injector.destroy();
        grpcServer.forceShutdown();
        await closed;
      })()),
  };
}

/** The gRPC error for a failure: PodminErrors keep their code (trailer) and message. */
function errorResponse(err: unknown, log: StructuredLogger): ServerErrorResponse {
  if (err instanceof PodminError) {
    const metadata = new Metadata();
    metadata.set(PODMIN_CODE_TRAILER, err.code);
    return {
      name: err.name,
      message: err.message,
      code: grpcStatusOf(err.code),
      details: err.message,
      metadata,
    };
  }
  log.event('error', 'coordination hello failed', {
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return {
    name: 'Error',
    message: 'internal error',
    code: status.INTERNAL,
    details: 'internal error',
  };
}

/** The address part of grpc-js's `getPeer()` (`[::1]:5000`, `ipv6:[::1]:5000`), canonical. */
function remoteOf(peer: string): string {
  const bracketed = /\[([^\]]+)\]:\d+$/.exec(peer);
  const address = bracketed?.[1] ?? peer.replace(/:\d+$/, '');
  return remoteText(address) ?? peer;
}

/** Canonical text of a socket's remote address (IPv6 canonical; anything else as given). */
function remoteText(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  return canonicalIpv6(address) ?? address;
}

/** Words for Node's client-certificate verification codes (the log's `reason`). */
function describeVerifyError(error: Error | string | undefined): string {
  const code = typeof error === 'string' ? error : (error?.message ?? 'unknown');
  const words: Record<string, string> = {
    CERT_HAS_EXPIRED: 'client certificate has expired',
    CERT_NOT_YET_VALID: 'client certificate is not yet valid',
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'client certificate is not issued by the cluster CA',
    UNABLE_TO_GET_ISSUER_CERT: 'client certificate is not issued by the cluster CA',
    UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'client certificate is not issued by the cluster CA',
    SELF_SIGNED_CERT_IN_CHAIN: 'client certificate chains to a CA other than the cluster CA',
    DEPTH_ZERO_SELF_SIGNED_CERT: 'client certificate is self-signed',
    CERT_SIGNATURE_FAILURE: 'client certificate signature is invalid',
  };
  return `${words[code] ?? 'client certificate not verified'} (${code})`;
}

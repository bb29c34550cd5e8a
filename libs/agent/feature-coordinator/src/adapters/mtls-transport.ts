import type { StructuredLogger } from '@podmin/agent-util-logging';
import { dialCoordination, type CoordinationClient } from '../coordination/coordination-client';
import { answerOf, requestOf } from '../coordination/coordination-proto';
import { startCoordinationServer } from '../coordination/coordination-server';
import {
  coordinationClientCredentials,
  coordinationServerCredentials,
  type CoordinationServerCredentials,
} from '../coordination/credentials';
import type {
  CoordinationTransport,
  HelloAnswer,
  HelloReport,
  NodeLeaf,
  NodeLeafSource,
} from '../coordinator.ports';

/** Where this node serves coordination and how it proves who it is. */
export interface MtlsTransportOptions {
  /** The node IPv6 address. */
  readonly host: string;
  readonly port: number;
  readonly cluster: string;
  readonly leaves: NodeLeafSource;
  readonly log: StructuredLogger;
}

/**
 * The coordination transport over mutual TLS 1.3: one set of server credentials renewed in
 * memory, and a client of the current leader re-dialled when the leader or our leaf changes.
 */
export function mtlsTransport(options: MtlsTransportOptions): CoordinationTransport {
  let credentials: Promise<CoordinationServerCredentials> | undefined;
  let dialled: { addr: string; leaf: NodeLeaf; client: CoordinationClient } | undefined;
  const serverCredentials = (): Promise<CoordinationServerCredentials> => {
    credentials ??= coordinationServerCredentials(options.leaves, { log: options.log }).catch(
      (err: unknown) => {
        credentials = undefined;
        throw err;
      },
    );
    return credentials;
  };
  return {
    async serve(handler) {
      const server = await startCoordinationServer({
        host: options.host,
        port: options.port,
        credentials: await serverCredentials(),
        handler,
        cluster: options.cluster,
        log: options.log,
      });
      return { address: server.address, close: () => server.close() };
    },
    async hello(addr: string, report: HelloReport, timeoutMs: number): Promise<HelloAnswer> {
      const leaf = (await serverCredentials()).current();
      if (dialled === undefined || dialled.addr !== addr || dialled.leaf !== leaf) {
        dialled?.client.close();
        dialled = {
          addr,
          leaf,
          client: dialCoordination(addr, coordinationClientCredentials(leaf, options.cluster)),
        };
      }
      return answerOf(await dialled.client.hello(requestOf(report), { timeoutMs }));
    },
    close() {
      dialled?.client.close();
      dialled = undefined;
      void credentials?.then((c) => c.close()).catch(() => undefined);
    },
  };
}

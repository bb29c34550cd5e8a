import type { identity } from '@podmin/agent-contracts';
import { PodminError } from '@podmin/util-errors';
import type { NodeLeaf, NodeLeafSource } from '../coordinator.ports';

/** The one Identity method the coordinator uses (an `AgentClient<'identity'>` fits). */
export interface NodeCertificateClient {
  getNodeCertificate(
    request: identity.GetNodeCertificateRequest,
    options?: { timeoutMs?: number },
  ): Promise<identity.NodeCertificate>;
}

/** Retry settings while agent-identity is still starting. */
export interface LeafRetry {
  attempts: number;
  delayMs: number;
}

/**
 * The node leaf from agent-identity (which issues and renews it in memory from the cluster CA).
 * The processes start together, so the first calls are retried while identity comes up.
 */
export function identityNodeLeaves(
  client: NodeCertificateClient,
  retry: LeafRetry = { attempts: 20, delayMs: 500 },
): NodeLeafSource {
  return {
    async leaf(): Promise<NodeLeaf> {
      let last: unknown;
      for (let attempt = 0; attempt < retry.attempts; attempt++) {
        try {
          const c = await client.getNodeCertificate({}, { timeoutMs: 5_000 });
          const notAfter = new Date(c.notAfter);
          if (Number.isNaN(notAfter.getTime()))
            throw new PodminError('INTERNAL', `node certificate has a bad notAfter ${c.notAfter}`);
          return {
            certificatePem: c.certificatePem,
            privateKeyPem: c.privateKeyPem,
            caPem: c.caPem,
            notAfter,
          };
        } catch (err) {
          last = err;
          if (attempt + 1 < retry.attempts)
            await new Promise((resolve) => setTimeout(resolve, retry.delayMs));
        }
      }
      throw new PodminError(
        'SERVICE_UNAVAILABLE',
        `getting the node's coordination certificate from agent-identity: ${last instanceof Error ? last.message : String(last)}`,
        { cause: last },
      );
    },
  };
}

// One node of the aws provider against the AWS-API emulator, for specs that run the built agent:
// a fresh bucket, a fresh cluster whose secrets `podmin setup` seeded in Parameter Store, and the
// agent started on free loopback ports with the emulator's endpoints.
import { createS3Client, S3ObjectStore } from '@podmin/data-access-object-store';
import { createSsmClient, ParameterStoreSecretStore } from '@podmin/data-access-secrets';
import {
  awsAgentArgs,
  emulatorAgentEnv,
  emulatorBucket,
  seedClusterSecrets,
  startBuiltAgent,
  type AwsEmulator,
  type StartedAgent,
} from '@podmin/testing';

/** An aws-provider cluster in the emulator, ready for one built agent. */
export interface EmulatorNode {
  emulator: AwsEmulator;
  /** The bucket's name (`--bucket`). */
  bucket: string;
  /** The bucket, as the test reads and writes it. */
  objects: S3ObjectStore;
  /** A cluster name of this node's own, so specs never share Parameter Store names. */
  cluster: string;
  /** Parameter Store in the emulator, seeded for {@link cluster}. */
  secrets: ParameterStoreSecretStore;
}

/**
 * Creates a bucket named `<bucketPrefix>-…` and a cluster whose Parameter Store holds what
 * `podmin setup` stores, plus `extraSecrets(cluster)` (parameter name → value).
 */
export async function makeEmulatorNode(
  bucketPrefix: string,
  extraSecrets: (cluster: string) => Record<string, string> = () => ({}),
): Promise<EmulatorNode> {
  const { emulator, client, bucket } = await emulatorBucket(bucketPrefix, createS3Client);
  const cluster = `c${Date.now().toString(36)}`;
  const secrets = new ParameterStoreSecretStore(createSsmClient(emulator));
  await seedClusterSecrets(secrets, cluster, extraSecrets(cluster));
  return { emulator, bucket, objects: new S3ObjectStore({ client, bucket }), cluster, secrets };
}

/**
 * Starts the built agent for `node` on `nodeRoot` and free loopback ports, reaching the emulator;
 * `env` adds to (or overrides) the emulator's endpoints.
 */
export function startEmulatorAgent(
  node: EmulatorNode,
  nodeRoot: string,
  env: Record<string, string> = {},
): Promise<StartedAgent> {
  return startBuiltAgent({
    args: awsAgentArgs(node.bucket, node.emulator.region, node.cluster),
    nodeRoot,
    env: { ...emulatorAgentEnv(node.emulator), ...env },
  });
}

import os from 'node:os';
import path from 'node:path';
import { checkS3BucketName, type ProviderRegistry } from '@podmin/util-names';

/**
 * What the agent's configuration asks of a provider: how its bucket and region look, and the
 * node's identity (root, address, ID, which Pod prefixes). Pure rules, so every process can
 * check its flags without loading a provider's SDKs.
 */
export interface AgentProviderRules {
  /** Why `bucket` cannot be this provider's cluster bucket, or undefined. */
  checkBucket(bucket: string): string | undefined;
  /** Why `region` is not a region of this provider, or undefined. */
  checkRegion(region: string): string | undefined;
  /** Whether a Pod prefix may be unique-local (fc00::/7) as well as global unicast. */
  readonly allowsUniqueLocalPrefix: boolean;
  /** The node root when PODMIN_NODE_ROOT is unset, or why the variable is required. */
  readonly nodeRoot: { readonly default: string } | { readonly required: string };
  /** The file-backed secret store when PODMIN_LOCAL_SECRETS_FILE is unset, if the provider has one. */
  defaultSecretsFile(nodeRoot: string): string | undefined;
  /** The node's IPv6 address when PODMIN_NODE_ADDRESS is unset. */
  defaultNodeAddress(): string;
  /** The node's ID when PODMIN_NODE_ID is unset. */
  defaultNodeId(): string;
  /** Whether agent-dataplane attaches to the host's own interfaces, not only to Pod veths. */
  readonly dataplaneOnHostInterfaces: boolean;
}

/** Provider rules by name, as the parse needs them (a {@link ProviderRegistry} is one). */
export type AgentProviderLookup = Pick<
  ProviderRegistry<AgentProviderRules>,
  'names' | 'has' | 'get'
>;

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** First global or unique-local IPv6 address of this host, else the loopback address. */
export function discoverNodeAddress(interfaces = os.networkInterfaces()): string {
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) {
      if (a.family === 'IPv6' && !a.internal && !a.address.toLowerCase().startsWith('fe80'))
        return a.address;
    }
  }
  return '::1';
}

/** The aws provider's rules: an S3 bucket in an AWS region, on a VM whose root is `/`. */
export const awsAgentRules: AgentProviderRules = Object.freeze({
  checkBucket: (bucket: string) => {
    const why = checkS3BucketName(bucket);
    return why ? `must be an S3 bucket name: ${why}` : undefined;
  },
  checkRegion: (region: string) =>
    REGION.test(region) ? undefined : 'must be an AWS region such as us-east-1',
  allowsUniqueLocalPrefix: false,
  nodeRoot: Object.freeze({ default: '/' }),
  defaultSecretsFile: () => undefined,
  defaultNodeAddress: () => discoverNodeAddress(),
  defaultNodeId: () => os.hostname(),
  dataplaneOnHostInterfaces: true,
});

/**
 * The local provider's rules: a bucket directory, region `local`, a node root of its own (so a
 * development machine's /etc and /run are never written by accident), unique-local Pod
 * prefixes, secrets in a file, and a dataplane on Pod veths only (no other node to reach).
 */
export const localAgentRules: AgentProviderRules = Object.freeze({
  checkBucket: (bucket: string) =>
    path.isAbsolute(bucket)
      ? undefined
      : 'must be an absolute directory path for the local provider',
  checkRegion: (region: string) =>
    region === 'local' ? undefined : 'must be local for the local provider',
  allowsUniqueLocalPrefix: true,
  nodeRoot: Object.freeze({
    required: 'is required for the local provider (`podmin setup` sets it)',
  }),
  defaultSecretsFile: (nodeRoot: string) =>
    path.join(nodeRoot, 'var', 'lib', 'podmin', 'secrets.json'),
  defaultNodeAddress: () => discoverNodeAddress(),
  defaultNodeId: () => os.hostname(),
  dataplaneOnHostInterfaces: false,
});

/** `a`, `a or b`, `a, b or c`: the known provider names in a message. */
export function orList(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '(none)';
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1] as string}`;
}

import type { Reporter } from '@podmin/cli-util-io';
import type { DesiredStateStore } from '@podmin/data-access-desired-state';
import type { SecretStore } from '@podmin/data-access-secrets';

/** What DescribeKey and GetPublicKey say about an AWS KMS key that would sign indexes. */
export interface KmsKeyFacts {
  /** The key's ARN as KMS reports it. */
  arn: string;
  /** e.g. `ECC_NIST_P256`, `SYMMETRIC_DEFAULT`; undefined when KMS did not say. */
  keySpec: string | undefined;
  /** e.g. `SIGN_VERIFY`, `ENCRYPT_DECRYPT`; undefined when KMS did not say. */
  keyUsage: string | undefined;
  /** e.g. `ECDSA_SHA_256`. */
  signingAlgorithms: readonly string[];
  /** Whether the key is enabled (a disabled or pending-deletion key cannot sign). */
  enabled: boolean;
}

/** The AWS KMS operations trusted deployers need (one adapter: `AwsKmsKeys`). */
export interface KmsKeys {
  /** DescribeKey: the key's spec, usage and algorithms. */
  describe(arn: string): Promise<KmsKeyFacts>;
  /** GetPublicKey: the key's public half, SubjectPublicKeyInfo DER. */
  publicKey(arn: string): Promise<Buffer>;
  /** Sign, MessageType RAW, SigningAlgorithm ECDSA_SHA_256: a DER ECDSA signature. */
  sign(arn: string, message: Buffer): Promise<Buffer>;
}

/** Where `podmin trust` keeps a cluster's trust list: the Parameter Store of its context. */
export interface TrustListDeps {
  /** The cluster whose `/<cluster>/_system/deployers` is read and written. */
  cluster: string;
  /** Opens the context's `aws-parameter-store` secret store (nodes read the list there). */
  openStore(): Promise<SecretStore>;
}

/** What the `podmin trust` operations need from the CLI shell. */
export interface TrustDeps extends TrustListDeps {
  reporter: Pick<Reporter, 'info' | 'warn' | 'result' | 'confirm'>;
  /** Podmin's config directory; local keys live under `<config>/trust/<cluster>/`. */
  configDir: string;
  /** True when a person can answer a question (stdin is a terminal). */
  interactive: boolean;
  /** The KMS client, built only when a KMS key is used. */
  kms(): Promise<KmsKeys>;
  /** Opens the context's bucket, for re-signing the index. */
  openBucket(): Promise<DesiredStateStore>;
  /** The current time (injected for tests). */
  now?: () => Date;
}

import type { ObjectStore } from '@podmin/data-access-object-store';

/** Reads committed desired state (index and immutable payloads). */
export type DesiredStateReader = Pick<ObjectStore, 'get' | 'getIfChanged'>;

/** Writes this node's receipt object (unconditionally: the node owns its key). */
export type ReceiptSink = Pick<ObjectStore, 'put'>;

/** Secret providers a Pod may name in its annotations. */
export type SecretProviderName = 'aws-parameter-store' | 'aws-secrets-manager';

/** Fetches one secret value by its full name `/<cluster>/<namespace>/<pod>/<key>`. */
export interface SecretSource {
  fetch(provider: SecretProviderName, name: string): Promise<Buffer>;
}

/** What identity issuance needs to know about a Pod. */
export interface IdentityRequest {
  pod: string;
  namespace: string;
  /** `podmin.dev/service` of the Pod, when it has a Service. */
  service?: string;
}

/** Issues and maintains workload identities on the node. */
export interface IdentityIssuer {
  /** Ensures a valid identity generation for the Pod; returns its fingerprint and RFC 3339 expiry. */
  ensure(request: IdentityRequest): Promise<{ fingerprint: string; notAfter?: string }>;
  /** Removes a departed Pod's identity files. */
  remove(pod: string): Promise<void>;
}

/** Service desired state handed on after Pod commits succeed. */
export interface DesiredService {
  namespace: string;
  name: string;
  /** The deployment (index key) that owns it. */
  owner: string;
  /** Canonical Service object. */
  object: Record<string, unknown>;
}

/** Receives the node's Service desired state (the coordinator, later). */
export interface ServiceSink {
  publish(services: readonly DesiredService[]): Promise<void>;
}

/**
 * Reads the cluster's trust list `/<cluster>/_system/deployers` from the node's Parameter Store
 * secret store: its bytes, or a NOT_FOUND error when the cluster has none (enforcement off).
 */
export interface TrustListReader {
  get(name: string): Promise<Buffer>;
}

/** Injection tokens of the ports. */
export const DESIRED_STATE_READER = Symbol('DESIRED_STATE_READER');
/** Token of the SecretSource port. */
export const SECRET_SOURCE = Symbol('SECRET_SOURCE');
/** Token of the IdentityIssuer port. */
export const IDENTITY_ISSUER = Symbol('IDENTITY_ISSUER');
/** Token of the TrustListReader port (absent: no trust list is read, enforcement is off). */
export const TRUST_LIST_READER = Symbol('TRUST_LIST_READER');

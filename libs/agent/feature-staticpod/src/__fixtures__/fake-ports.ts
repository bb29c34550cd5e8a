import crypto from 'node:crypto';
import { PodminError } from '@podmin/util-errors';
import type {
  DesiredService,
  IdentityIssuer,
  IdentityRequest,
  SecretProviderName,
  SecretSource,
  ServiceSink,
} from '../staticpod.ports';

/**
 * Secret source fake: `values` by name, else `fallback(name)` when given, else NOT_FOUND; set
 * `failing` to make the provider unreachable. Records each fetch as `provider:name`.
 */
export class FakeSecrets implements SecretSource {
  readonly values = new Map<string, string>();
  readonly fetched: string[] = [];
  failing = false;
  constructor(private readonly fallback?: (name: string) => string) {}
  fetch(provider: SecretProviderName, name: string): Promise<Buffer> {
    this.fetched.push(`${provider}:${name}`);
    if (this.failing)
      return Promise.reject(
        new PodminError('BUCKET_UNAVAILABLE', `fetching ${name}: provider unreachable`),
      );
    const value = this.values.get(name) ?? this.fallback?.(name);
    return value === undefined
      ? Promise.reject(new PodminError('NOT_FOUND', `fetching ${name}: no such secret`))
      : Promise.resolve(Buffer.from(value));
  }
}

/**
 * Identity issuer fake: a stable fingerprint per Pod and certificate generation (bump
 * `generation` to model a renewed or reissued certificate), `notAfter` when constructed with
 * one, and a hook run while a pass stages. Records the Pods it ensured and removed.
 */
export class FakeIdentity implements IdentityIssuer {
  readonly ensured: string[] = [];
  readonly removed: string[] = [];
  generation = 0;
  duringEnsure: (() => Promise<void>) | undefined;
  constructor(private readonly notAfter?: string) {}
  async ensure(request: IdentityRequest): Promise<{ fingerprint: string; notAfter?: string }> {
    this.ensured.push(request.pod);
    await this.duringEnsure?.();
    const fingerprint = crypto
      .createHash('sha256')
      .update(`${request.namespace}/${request.pod}/${request.service ?? ''}/${this.generation}`)
      .digest('hex');
    return this.notAfter === undefined ? { fingerprint } : { fingerprint, notAfter: this.notAfter };
  }
  remove(pod: string): Promise<void> {
    this.removed.push(pod);
    return Promise.resolve();
  }
}

/** Service sink fake recording each hand-off. */
export class RecordingSink implements ServiceSink {
  readonly published: DesiredService[][] = [];
  publish(services: readonly DesiredService[]): Promise<void> {
    this.published.push([...services]);
    return Promise.resolve();
  }
}

import { hasCode } from '@podmin/util-errors';
import type { Clock, WorkloadCaKey, WorkloadIssuer } from '@podmin/util-pki';
import { isValidAt } from '@podmin/util-pki';
import type { VerifiedCaState } from './ca-state';
import { CA_STATE_KEY, CA_STATE_MAX_BYTES, parseCaState, verifyCaState } from './ca-state';
import { IdentityError } from './identity-error';
import type { CaStateObjects } from './identity.ports';

/** The workload CA as an agent may use it: verified against the stored key and currently valid. */
export interface TrustedWorkloadCa extends VerifiedCaState {
  /** ETag of the `identity/ca.json` it came from (a change means a changed bundle). */
  etag: string;
  /** The active certificate with the in-memory key: signs leaves. */
  issuer: WorkloadIssuer;
}

/**
 * Every agent's reader of `identity/ca.json`: conditional GET, strict parse, and a check that
 * every downloaded certificate certifies the stored key before any leaf is issued with it.
 */
export class WorkloadCaTrust {
  private cached: { etag: string; verified: VerifiedCaState } | undefined;

  constructor(
    private readonly objects: Pick<CaStateObjects, 'get' | 'getIfChanged'>,
    private readonly key: WorkloadCaKey,
    private readonly clock: Clock,
    private readonly cluster: string,
  ) {}

  /**
   * The current trusted CA. OBJECT_NOT_FOUND while the leader has not created it yet;
   * PRECONDITION_FAILED while the active certificate is expired (the leader recovers it).
   */
  async load(): Promise<TrustedWorkloadCa> {
    const what = `loading the workload CA from ${CA_STATE_KEY}`;
    try {
      if (this.cached) {
        const result = await this.objects.getIfChanged(CA_STATE_KEY, this.cached.etag, {
          maxBytes: CA_STATE_MAX_BYTES,
        });
        if (result.status === 'changed')
          this.cached = { etag: result.etag, verified: this.verify(result.body) };
      } else {
        const obj = await this.objects.get(CA_STATE_KEY, { maxBytes: CA_STATE_MAX_BYTES });
        this.cached = { etag: obj.etag, verified: this.verify(obj.body) };
      }
    } catch (err) {
      if (hasCode(err, 'OBJECT_NOT_FOUND')) {
        this.cached = undefined;
        throw new IdentityError('OBJECT_NOT_FOUND', `${what}: the leader has not created it yet`, {
          cause: err,
        });
      }
      throw err;
    }
    const { etag, verified } = this.cached;
    const now = this.clock.now();
    if (!isValidAt(verified.active, now)) {
      throw new IdentityError(
        'PRECONDITION_FAILED',
        `${what}: the active certificate is not valid at ${now.toISOString()} (expires ${verified.active.notAfter.toISOString()})`,
        { hint: 'the elected leader replaces an expired workload CA automatically' },
      );
    }
    return { ...verified, etag, issuer: { certificate: verified.active, key: this.key } };
  }

  private verify(body: Buffer): VerifiedCaState {
    return verifyCaState(parseCaState(body), this.key, this.cluster);
  }
}

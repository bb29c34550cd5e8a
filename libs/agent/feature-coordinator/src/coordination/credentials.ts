import tls from 'node:tls';
import type { PeerCertificate, SecureContextOptions } from 'node:tls';
import { ServerCredentials, credentials, type ChannelCredentials } from '@grpc/grpc-js';
import type { StructuredLogger } from '@podmin/agent-util-logging';
import { CLOCK_SKEW_MARGIN_MS, parseCertificate } from '@podmin/util-pki';
import type { NodeLeaf, NodeLeafSource } from '../coordinator.ports';
import type { WallClock } from '../election/election.ports';
import { canonicalIpv6, peerIdentity } from './peer-identity';
import { errorMessage } from '../error-message';

/** Schedules the leaf renewal; a fake in unit tests. */
export interface RenewalTimer {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** How the server leaf is renewed. */
export interface LeafRenewalOptions {
  /** The clock certificate validity is judged on (default: the system clock). */
  readonly clock?: WallClock;
  /** Default: `setTimeout` (unref'd, so it never keeps a process alive). */
  readonly timer?: RenewalTimer;
  /** Renew once this fraction of the leaf's lifetime has passed (default 2/3). */
  readonly renewFraction?: number;
  /** Wait before asking again when the source gave no new leaf or failed (default 30 s). */
  readonly retryMs?: number;
  /** `renew coordination leaf` and its failures. */
  readonly log?: StructuredLogger;
}

/** TLS 1.3 only: both ends, so neither side ever offers or accepts 1.2. */
export const TLS13_ONLY = { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' } as const;

const MAX_TIMER_MS = 2 ** 31 - 1;
const MIN_RETRY_MS = 250;

const systemTimer: RenewalTimer = {
  set: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref();
    return handle;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The secure-context options (certificate, key, trust anchors) of one leaf. */
function contextOptionsOf(leaf: NodeLeaf): SecureContextOptions {
  return {
    ...TLS13_ONLY,
    cert: leaf.certificatePem,
    key: leaf.privateKeyPem,
    ca: leaf.caPem,
  };
}

/**
 * grpc-js server credentials for coordination: TLS 1.3 only, a client certificate required and
 * verified under the cluster CA, our leaf from a {@link NodeLeafSource}. The leaf is renewed in
 * memory at `renewFraction` of its lifetime and pushed to every server using these credentials
 * through `updateSecureContextOptions`, so running servers never restart. Usable with
 * `Server.bindAsync` as well as with {@link startCoordinationServer}.
 */
export class CoordinationServerCredentials extends ServerCredentials {
  private leaf: NodeLeaf;
  private timer: unknown;
  private closed = false;
  private renewing: Promise<boolean> | undefined;
  private readonly clock: WallClock;
  private readonly renewalTimer: RenewalTimer;
  private readonly renewFraction: number;
  private readonly retryMs: number;
  private readonly log: StructuredLogger | undefined;

  private constructor(
    private readonly source: NodeLeafSource,
    first: NodeLeaf,
    options: LeafRenewalOptions,
  ) {
    super({ ...TLS13_ONLY, requestCert: true, rejectUnauthorized: true }, contextOptionsOf(first));
    this.leaf = first;
    this.clock = options.clock ?? { now: () => new Date() };
    this.renewalTimer = options.timer ?? systemTimer;
    this.renewFraction = options.renewFraction ?? 2 / 3;
    this.retryMs = options.retryMs ?? 30_000;
    this.log = options.log;
  }

  /** Fetches the first leaf and schedules its renewal. */
  static async create(
    source: NodeLeafSource,
    options: LeafRenewalOptions = {},
  ): Promise<CoordinationServerCredentials> {
    const creds = new CoordinationServerCredentials(source, await source.leaf(), options);
    creds.schedule(creds.dueInMs());
    return creds;
  }

  /** The leaf currently served. */
  current(): NodeLeaf {
    return this.leaf;
  }

  /**
   * Asks the source for a leaf now; pushes it to running servers when it differs from the one
   * served. Resolves true when the served leaf changed. Never rejects (failures are logged).
   */
  renewNow(): Promise<boolean> {
    this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  /** Stops renewing (servers keep the last leaf). */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.renewalTimer.clear(this.timer);
    this.timer = undefined;
  }

  /** Identity: the credentials of one leaf source are equal only to themselves. */
  _equals(other: ServerCredentials): boolean {
    return other === this;
  }

  private async renew(): Promise<boolean> {
    let changed = false;
    try {
      const next = await this.source.leaf();
      if (next.certificatePem !== this.leaf.certificatePem) {
        const info = parseCertificate(next.certificatePem, 'node leaf');
        this.leaf = next;
        this.updateSecureContextOptions(contextOptionsOf(next));
        changed = true;
        this.log?.event('info', 'renew coordination leaf', {
          serial: info.serialNumber,
          notAfter: info.notAfter.toISOString(),
        });
      }
    } catch (err) {
      this.log?.event('warn', 'renew coordination leaf failed', {
        error: errorMessage(err),
        notAfter: this.leaf.notAfter.toISOString(),
      });
    }
    if (!this.closed) this.schedule(changed ? this.dueInMs() : this.retryInMs());
    return changed;
  }

  /** Time until the renewal point of the served leaf (at once when already past it). */
  private dueInMs(): number {
    // The fraction counts from the issue, not from the notBefore backdated for clock skew.
    const issuedAt =
      parseCertificate(this.leaf.certificatePem, 'node leaf').notBefore.getTime() +
      CLOCK_SKEW_MARGIN_MS;
    const notAfter = this.leaf.notAfter.getTime();
    const now = this.clock.now().getTime();
    const due = Math.min(
      issuedAt + this.renewFraction * (notAfter - issuedAt),
      // A leaf handed over late (little left) is renewed at the same fraction of what is left.
      now + this.renewFraction * (notAfter - now),
    );
    return Math.max(0, due - now);
  }

  /** After a failed or unchanged renewal: soon, and sooner as expiry nears. */
  private retryInMs(): number {
    const left = this.leaf.notAfter.getTime() - this.clock.now().getTime();
    return Math.max(MIN_RETRY_MS, Math.min(this.retryMs, left / 4));
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    if (this.timer !== undefined) this.renewalTimer.clear(this.timer);
    this.timer = this.renewalTimer.set(
      () => {
        this.timer = undefined;
        void this.renewNow();
      },
      Math.min(ms, MAX_TIMER_MS),
    );
  }
}

/** Creates {@link CoordinationServerCredentials} from a leaf source. */
export function coordinationServerCredentials(
  source: NodeLeafSource,
  options: LeafRenewalOptions = {},
): Promise<CoordinationServerCredentials> {
  return CoordinationServerCredentials.create(source, options);
}

/**
 * Checks a coordination server's certificate (the chain is verified by TLS first): a node SPIFFE
 * ID of `cluster` and an IP SAN equal to the address dialled. Returns the error to fail the
 * handshake with, or undefined.
 */
export function checkCoordinationServer(
  cert: PeerCertificate,
  cluster: string,
  address: string,
): Error | undefined {
  try {
    const peer = peerIdentity(cert, cluster);
    const dialled = canonicalIpv6(address);
    if (dialled === undefined || !peer.addresses.includes(dialled)) {
      return new Error(
        `authorizing coordination server: its IP SANs ${peer.addresses.join(', ')} do not include the dialled address ${address}`,
      );
    }
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** Client credentials of one node leaf, bound to an address per dial. */
export interface CoordinationClientCredentials {
  /** The cluster whose trust domain the server must belong to. */
  readonly cluster: string;
  /** The leaf presented (renew by creating new credentials from a newer leaf). */
  readonly leaf: NodeLeaf;
  /**
   * grpc-js channel credentials: TLS 1.3, our leaf, the server's chain verified under the
   * cluster CA, and the server certificate checked by {@link checkCoordinationServer} against
   * `address` (the IPv6 dialled).
   */
  forAddress(address: string): ChannelCredentials;
}

/** Client credentials of `leaf` for servers of `cluster`. */
export function coordinationClientCredentials(
  leaf: NodeLeaf,
  cluster: string,
): CoordinationClientCredentials {
  const context = tls.createSecureContext(contextOptionsOf(leaf));
  return {
    cluster,
    leaf,
    forAddress: (address) =>
      credentials.createFromSecureContext(context, {
        rejectUnauthorized: true,
        // Nodes are dialled by IP: the address, not a host name, is what the leaf must name.
        checkServerIdentity: (_host, cert) => checkCoordinationServer(cert, cluster, address),
      }),
  };
}

import { chmod, lstat, mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Clock, WorkloadIdentity } from '@podmin/util-pki';
import {
  WORKLOAD_LEAF_RENEW_BEFORE_MS,
  assertWorkloadIdentity,
  checkWorkloadLeaf,
  issueWorkloadLeaf,
  parseCertificate,
} from '@podmin/util-pki';
import { fileSystemError, modeOf, publishGeneration, selectedGeneration } from './generations';
import type { TrustedWorkloadCa } from './workload-ca.trust';

/** Node path of the workloads subtree, below the node root. */
export const WORKLOADS_DIR = 'run/podmin/workloads';
/** Name of the generation directory inside a Pod's directory. */
export const GENERATIONS_DIR = 'identity-generations';
/** Name of the symlink selecting the current generation. */
export const IDENTITY_LINK = 'identity';
/** Mode of every identity file: readable by non-root containers, writable by nobody. */
export const IDENTITY_FILE_MODE = 0o444;
/** Mode of a completed generation directory: immutable once written. */
export const GENERATION_DIR_MODE = 0o555;

const FILES = ['tls.crt', 'tls.key', 'ca.crt'] as const;
const LAYOUT = {
  link: IDENTITY_LINK,
  generationsDir: GENERATIONS_DIR,
  modes: { file: IDENTITY_FILE_MODE, dir: GENERATION_DIR_MODE },
};

/** Outcome of ensuring a Pod's identity. */
export interface WorkloadIdentityResult {
  /** SHA-256 fingerprint of the current leaf: the `podmin.dev/identity-revision` value. */
  fingerprint: string;
  /** The selected generation's id. */
  generation: string;
  /** `reused` when a valid generation was already selected, `issued` when a new one was written. */
  outcome: 'reused' | 'issued';
  /** Why the previous generation was replaced (`missing` when there was none). */
  replaced?: string;
  /** The leaf's expiry. */
  notAfter: Date;
  /** When the leaf is due for renewal (six hours before expiry). */
  renewAt: Date;
  /** Absolute path of the `identity` symlink (the directory to mount read-only). */
  identityPath: string;
}

/**
 * Issues and keeps workload identities on the node's tmpfs. Each Pod gets immutable
 * generations `<root>/run/podmin/workloads/<pod>/identity-generations/<id>/{tls.crt,tls.key,
 * ca.crt}` (files 0444, directory 0555) selected by the relative symlink `<pod>/identity`,
 * swapped atomically; exactly one previous generation is kept. A valid selected generation is
 * reused, so agent restarts do not restart Pods.
 */
export class WorkloadIdentityService {
  private readonly locks = new Map<string, Promise<unknown>>();

  /** `root` is the node root (`/` on a VM, a directory under the Podmin data directory locally). */
  constructor(
    private readonly root: string,
    private readonly clock: Clock,
  ) {}

  /** The directory of one Pod below the workloads subtree. */
  podDirectory(pod: string): string {
    return path.join(this.root, WORKLOADS_DIR, pod);
  }

  /**
   * Makes sure the Pod's selected generation is valid for `identity` under `ca` (chain, names,
   * key, modes, `ca.crt` equal to the current bundle, more than six hours left); otherwise
   * issues a new leaf into a new generation and switches the symlink to it.
   */
  ensure(identity: WorkloadIdentity, ca: TrustedWorkloadCa): Promise<WorkloadIdentityResult> {
    assertWorkloadIdentity(identity);
    // One Pod's generations are changed by one call at a time.
    const previous = this.locks.get(identity.pod) ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(() => this.ensureLocked(identity, ca))
      .catch((err: unknown) => {
        throw fileSystemError(err, `issuing the workload identity of Pod ${identity.pod}`);
      });
    this.locks.set(identity.pod, run);
    void run
      .finally(() => {
        if (this.locks.get(identity.pod) === run) this.locks.delete(identity.pod);
      })
      .catch(() => undefined);
    return run;
  }

  private async ensureLocked(
    identity: WorkloadIdentity,
    ca: TrustedWorkloadCa,
  ): Promise<WorkloadIdentityResult> {
    const podDir = this.podDirectory(identity.pod);
    const linkPath = path.join(podDir, IDENTITY_LINK);
    const now = this.clock.now();
    const current = await selectedGeneration(linkPath, GENERATIONS_DIR);
    let replaced = 'missing';
    if (current) {
      const problem = await this.checkGeneration(
        path.join(podDir, GENERATIONS_DIR, current),
        identity,
        ca,
        now,
      );
      if (problem === undefined) {
        const cert = parseCertificate(
          await readFile(path.join(podDir, GENERATIONS_DIR, current, 'tls.crt'), 'utf8'),
        );
        return this.result(cert.fingerprint, current, 'reused', cert.notAfter, linkPath);
      }
      replaced = problem;
    }
    const leaf = await issueWorkloadLeaf(ca.issuer, identity, now);
    const gensDir = path.join(podDir, GENERATIONS_DIR);
    await privateDirectories(podDir);
    await mkdir(gensDir, { recursive: true, mode: 0o755 });
    const files = {
      'tls.crt': leaf.certificatePem,
      'tls.key': leaf.privateKeyPem,
      'ca.crt': ca.bundlePem,
    };
    const { fingerprint } = leaf.certificate;
    const id = await publishGeneration(
      podDir,
      LAYOUT,
      { issuedAt: now, fingerprint, files },
      current,
    );
    return {
      ...this.result(fingerprint, id, 'issued', leaf.certificate.notAfter, linkPath),
      replaced,
    };
  }

  private result(
    fingerprint: string,
    generation: string,
    outcome: 'reused' | 'issued',
    notAfter: Date,
    identityPath: string,
  ): WorkloadIdentityResult {
    return {
      fingerprint,
      generation,
      outcome,
      notAfter,
      renewAt: new Date(notAfter.getTime() - WORKLOAD_LEAF_RENEW_BEFORE_MS),
      identityPath,
    };
  }

  /** Why a generation cannot be reused, or undefined when it can. */
  private async checkGeneration(
    dir: string,
    identity: WorkloadIdentity,
    ca: TrustedWorkloadCa,
    now: Date,
  ): Promise<string | undefined> {
    let contents: Record<(typeof FILES)[number], string>;
    try {
      const dirStat = await stat(dir);
      if (!dirStat.isDirectory() || modeOf(dirStat) !== GENERATION_DIR_MODE)
        return 'directory-mode';
      const entries = await Promise.all(
        FILES.map(async (name) => {
          const file = path.join(dir, name);
          const st = await lstat(file);
          if (!st.isFile() || modeOf(st) !== IDENTITY_FILE_MODE) throw new Error(`${name} mode`);
          return [name, await readFile(file, 'utf8')] as const;
        }),
      );
      contents = Object.fromEntries(entries) as Record<(typeof FILES)[number], string>;
    } catch {
      return 'unreadable';
    }
    if (contents['ca.crt'] !== ca.bundlePem) return 'ca-bundle-changed';
    return checkWorkloadLeaf(
      contents['tls.crt'],
      contents['tls.key'],
      identity,
      ca.certificates,
      now,
    );
  }
}

/**
 * The workloads root and the Pod's directory are 0700: the files inside stay 0444 for the Pod
 * (its bind mount starts below them, so the container never walks these), but no other host
 * user can list the Pods or reach any Pod's key. chmod as well, because mkdir honours the umask
 * and leaves existing directories alone.
 */
async function privateDirectories(podDir: string): Promise<void> {
  await mkdir(podDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await chmod(path.dirname(podDir), PRIVATE_DIR_MODE);
  await chmod(podDir, PRIVATE_DIR_MODE);
}

/** Mode of the workloads root and of every Pod's directory below it. */
export const PRIVATE_DIR_MODE = 0o700;

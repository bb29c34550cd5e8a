import { lstat, mkdir, chmod, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '@podmin/util-fs';
import {
  WORKLOAD_LEAF_RENEW_BEFORE_MS,
  checkTelemetryLeaf,
  issueTelemetryLeaf,
  parseCertificate,
  validateCaBundle,
  type Clock,
  type TelemetryIdentity,
} from '@podmin/util-pki';
import { fileSystemError, modeOf, publishGeneration, selectedGeneration } from './generations';
import type { TrustedWorkloadCa } from './workload-ca.trust';
import {
  EXPORTER_CA_FILE,
  TELEMETRY_CERT_FILE,
  TELEMETRY_DIR,
  TELEMETRY_GENERATIONS_DIR,
  TELEMETRY_KEY_FILE,
  TELEMETRY_LINK,
} from '@podmin/agent-util-config';

export { EXPORTER_CA_FILE, TELEMETRY_DIR, TELEMETRY_GENERATIONS_DIR, TELEMETRY_LINK };

/** Files of a generation: readable by root only (Fluent Bit runs as root). */
export const TELEMETRY_FILE_MODE = 0o600;
/** A completed generation: sealed, root only. */
export const TELEMETRY_GENERATION_MODE = 0o500;
const LAYOUT = {
  link: TELEMETRY_LINK,
  generationsDir: TELEMETRY_GENERATIONS_DIR,
  modes: { file: TELEMETRY_FILE_MODE, dir: TELEMETRY_GENERATION_MODE },
};
const CERT = TELEMETRY_CERT_FILE;
const KEY = TELEMETRY_KEY_FILE;

/** Outcome of a maintenance pass over the log-export identity. */
export interface TelemetryIdentityResult {
  outcome: 'reused' | 'issued';
  /** Why the previous generation was replaced (`missing` when there was none). */
  replaced?: string;
  generation: string;
  /** Absolute path of the concrete generation directory Fluent Bit is started with. */
  directory: string;
  notAfter: Date;
  renewAt: Date;
}

/**
 * The node's log-export client identity under `<root>/run/podmin/telemetry`: immutable
 * generations `otel-logs-generations/<id>/{client.crt,client.key}` (files 0600, directory
 * 0500, owned by the agent's user) selected by the `otel-logs` symlink, swapped atomically; one
 * previous generation is kept so a running Fluent Bit keeps its files until it restarts onto
 * the new one. Every pass checks the selected generation (key pair, chain, names, usages,
 * owner, modes, more than six hours left) and replaces it when anything is wrong.
 */
export class TelemetryIdentityService {
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly root: string,
    private readonly clock: Clock,
    private readonly uid: number = process.getuid?.() ?? 0,
  ) {}

  /** The telemetry subtree. */
  get directory(): string {
    return path.join(this.root, TELEMETRY_DIR);
  }

  /** One maintenance pass; passes never overlap. */
  ensure(identity: TelemetryIdentity, ca: TrustedWorkloadCa): Promise<TelemetryIdentityResult> {
    const run = this.running
      .catch(() => undefined)
      .then(() => this.ensureNow(identity, ca))
      .catch((err: unknown) => {
        throw fileSystemError(err, 'keeping the log-export identity');
      });
    this.running = run;
    return run;
  }

  private async ensureNow(
    identity: TelemetryIdentity,
    ca: TrustedWorkloadCa,
  ): Promise<TelemetryIdentityResult> {
    const dir = this.directory;
    const gensDir = path.join(dir, TELEMETRY_GENERATIONS_DIR);
    const now = this.clock.now();
    const current = await selectedGeneration(
      path.join(dir, TELEMETRY_LINK),
      TELEMETRY_GENERATIONS_DIR,
    );
    let replaced = 'missing';
    if (current !== undefined) {
      const problem = await this.check(path.join(gensDir, current), identity, ca, now);
      if (problem === undefined) {
        const cert = await readFile(path.join(gensDir, current, CERT), 'utf8');
        return this.result('reused', current, parseCertificate(cert).notAfter);
      }
      replaced = problem;
    }
    const leaf = await issueTelemetryLeaf(ca.issuer, identity, now);
    await privateDirectory(dir);
    await mkdir(gensDir, { recursive: true, mode: 0o700 });
    await chmod(gensDir, 0o700);
    const files = { [CERT]: leaf.certificatePem, [KEY]: leaf.privateKeyPem };
    const { fingerprint } = leaf.certificate;
    const id = await publishGeneration(dir, LAYOUT, { issuedAt: now, fingerprint, files }, current);
    return { ...this.result('issued', id, leaf.certificate.notAfter), replaced };
  }

  private result(
    outcome: 'reused' | 'issued',
    generation: string,
    notAfter: Date,
  ): TelemetryIdentityResult {
    return {
      outcome,
      generation,
      directory: path.join(this.directory, TELEMETRY_GENERATIONS_DIR, generation),
      notAfter,
      renewAt: new Date(notAfter.getTime() - WORKLOAD_LEAF_RENEW_BEFORE_MS),
    };
  }

  /** Why a generation cannot be kept, or undefined when it can. */
  private async check(
    dir: string,
    identity: TelemetryIdentity,
    ca: TrustedWorkloadCa,
    now: Date,
  ): Promise<string | undefined> {
    const files: Record<string, string> = {};
    try {
      const st = await stat(dir);
      if (!st.isDirectory() || modeOf(st) !== TELEMETRY_GENERATION_MODE) return 'directory-mode';
      if (st.uid !== this.uid) return 'owner';
      for (const name of [CERT, KEY]) {
        const file = await lstat(path.join(dir, name));
        if (!file.isFile() || modeOf(file) !== TELEMETRY_FILE_MODE) return 'file-mode';
        if (file.uid !== this.uid) return 'owner';
        files[name] = await readFile(path.join(dir, name), 'utf8');
      }
    } catch {
      return 'unreadable';
    }
    return checkTelemetryLeaf(files[CERT] ?? '', files[KEY] ?? '', identity, ca.certificates, now);
  }
}

/** The telemetry subtree is 0700: only the agent and Fluent Bit (root) reach the key. */
async function privateDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/** What one refresh of the exporter's CA bundle did. */
export type CaBundleRefresh =
  | { outcome: 'installed' | 'unchanged'; path: string }
  /** The fetch or the bundle failed; the last good bundle (if any) stays installed. */
  | { outcome: 'kept'; path: string; error: string };

/**
 * The exporter's private server-CA bundle (`ca=s3://B/K`): fetched, validated as CA-only PEM,
 * and installed atomically at `<telemetry>/otel-logs-ca.pem` (0600) when it changed; on any
 * failure the last good bundle stays in place and the reason is returned.
 */
export class ExporterCaBundle {
  constructor(
    private readonly root: string,
    private readonly source: string,
    private readonly fetchBundle: () => Promise<Uint8Array>,
    private readonly clock: Clock,
  ) {}

  /** Absolute path of the installed bundle. */
  get path(): string {
    return path.join(this.root, TELEMETRY_DIR, EXPORTER_CA_FILE);
  }

  async refresh(): Promise<CaBundleRefresh> {
    let pem: string;
    try {
      pem = validateCaBundle(await this.fetchBundle(), this.clock.now(), `ca=${this.source}`);
    } catch (err) {
      return {
        outcome: 'kept',
        path: this.path,
        error: err instanceof Error ? err.message : String(err),
      };
    }
    const installed = await readFile(this.path, 'utf8').catch(() => undefined);
    if (installed === pem) return { outcome: 'unchanged', path: this.path };
    await privateDirectory(path.dirname(this.path));
    await writeFileAtomic(this.path, pem, { mode: TELEMETRY_FILE_MODE });
    return { outcome: 'installed', path: this.path };
  }
}

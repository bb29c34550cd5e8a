import type { ContextStore, PodminDirs, ProviderRegistry } from '@podmin/cli-util-config';
import type { Reporter } from '@podmin/cli-util-io';
import type { FieldProblem } from '@podmin/util-errors';
import type { BucketLocation, ConnectOptions } from './connect';

/** Makes sure a bucket exists and is usable. */
export interface BucketPreparer {
  ensureBucket(): Promise<{ created: boolean }>;
  probeAccess(): Promise<void>;
  /** Removes the (empty) bucket; connect uses it to undo a creation when a later step fails. */
  deleteBucket(): Promise<void>;
}

/** A provider's rules for `connect`'s flags: pure, so they are checked before anything runs. */
export interface ConnectRules {
  /**
   * Resolves the region and bucket (defaults included) from the flags, appending every bad
   * flag to `problems`; the values matter only when nothing was appended.
   */
  resolveLocation(
    options: ConnectOptions,
    dataDir: string,
    problems: FieldProblem[],
  ): { region: string; bucket: string };
  /** How connect's messages name the bucket, e.g. `s3://b (eu-west-1)`. */
  describeBucket(location: BucketLocation): string;
}

/** What `connect` verifies on one provider: its flag rules and the bucket it prepares. */
export interface ConnectProvider extends ConnectRules {
  /** Opens the bucket connect creates or verifies. */
  openBucket(location: BucketLocation): Promise<BucketPreparer>;
}

/** What the context commands need from the CLI shell. */
export interface ContextDeps {
  reporter: Reporter;
  contexts: Pick<ContextStore, 'read' | 'update'>;
  dirs: PodminDirs;
  /** The providers `--provider` may name. */
  providers: Pick<ProviderRegistry<ConnectProvider>, 'names' | 'has' | 'get'>;
}

import type { ContextStore, PodminDirs } from '@podmin/cli-util-config';
import type { Reporter } from '@podmin/cli-util-io';
import type { BucketLocation } from './connect';

/** Makes sure a bucket exists and is usable. */
export interface BucketPreparer {
  ensureBucket(): Promise<{ created: boolean }>;
  probeAccess(): Promise<void>;
  /** Removes the (empty) bucket; connect uses it to undo a creation when a later step fails. */
  deleteBucket(): Promise<void>;
}

/** What the context commands need from the CLI shell. */
export interface ContextDeps {
  reporter: Reporter;
  contexts: Pick<ContextStore, 'read' | 'update'>;
  dirs: PodminDirs;
  openBucket(location: BucketLocation): Promise<BucketPreparer>;
}

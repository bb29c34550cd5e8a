import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import type { BucketProvisioner } from './bucket-provisioner.port';
import { errnoCode } from '@podmin/util-fs';
import { LocalDirectoryObjectStore } from './local-directory-object-store';
import { probeStoreAccess, randomProbeId } from './probe-access';
import type { ProbeIdSource } from './probe-access';

/** Creates and checks a local directory bucket (mode 0700). */
export class LocalBucketProvisioner implements BucketProvisioner {
  private readonly directory: string;

  constructor(
    directory: string,
    private readonly probeId: ProbeIdSource = randomProbeId,
  ) {
    this.directory = path.resolve(directory);
  }

  async deleteBucket(): Promise<void> {
    // The directory store keeps lock and temp entries of its own beside the objects.
    await rm(this.directory, { recursive: true, force: true });
  }

  async ensureBucket(): Promise<{ created: boolean }> {
    const doing = `creating local bucket ${this.directory}`;
    try {
      const stats = await stat(this.directory);
      if (!stats.isDirectory()) {
        throw new PodminError(
          'BUCKET_UNAVAILABLE',
          `${doing}: the path exists and is not a directory`,
        );
      }
      return { created: false };
    } catch (err) {
      if (err instanceof PodminError) {
        throw err;
      }
      if (errnoCode(err) !== 'ENOENT') {
        throw localError(err, doing);
      }
    }
    try {
      await mkdir(this.directory, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw localError(err, doing);
    }
    return { created: true };
  }

  async probeAccess(): Promise<void> {
    await probeStoreAccess(
      new LocalDirectoryObjectStore(this.directory),
      `local bucket ${this.directory}`,
      this.probeId,
    );
  }
}

function localError(err: unknown, doing: string): PodminError {
  const code = errnoCode(err);
  const why = err instanceof Error ? err.message : String(err);
  return new PodminError(
    code === 'EACCES' || code === 'EPERM' ? 'ACCESS_DENIED' : 'BUCKET_UNAVAILABLE',
    `${doing}: ${why}`,
    {
      cause: err,
    },
  );
}

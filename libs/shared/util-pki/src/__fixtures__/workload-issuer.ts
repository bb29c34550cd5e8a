import { WorkloadCaKey, createWorkloadCaCertificate } from '../workload-ca';
import type { WorkloadIssuer } from '../workload-leaf';

/**
 * A workload CA of `cluster` whose key comes from the seed byte `seed` (a different seed, a
 * different CA) and whose certificate is created at `now`.
 */
export async function workloadIssuer(
  seed: number,
  now: Date,
  cluster = 'prod',
): Promise<WorkloadIssuer> {
  const key = WorkloadCaKey.fromSeed(Buffer.alloc(32, seed));
  return { certificate: await createWorkloadCaCertificate(key, cluster, now), key };
}

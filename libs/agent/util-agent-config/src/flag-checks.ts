import type { FieldProblem } from '@podmin/util-errors';
import { isDnsLabel } from '@podmin/util-names';

/**
 * The value of the required flag `--<name>`, or `''` after adding an `is required` problem when
 * it is unset or empty; a flag that already has a problem (e.g. `needs a value`) gets no second.
 */
export function requiredFlag(
  flags: Readonly<Record<string, string | undefined>>,
  name: string,
  problems: FieldProblem[],
): string {
  const value = flags[name];
  const field = `--${name}`;
  if ((value === undefined || value === '') && !problems.some((p) => p.field === field))
    problems.push({ field, message: 'is required' });
  return value ?? '';
}

/** Checks `--cluster` and `--nodegroup` (each when set): DNS-1123 labels, the cluster ≤ 40. */
export function checkClusterNodegroup(
  cluster: string,
  nodegroup: string,
  problems: FieldProblem[],
): void {
  if (cluster && !isDnsLabel(cluster, 40))
    problems.push({
      field: '--cluster',
      message: 'must be a DNS-1123 label of at most 40 characters',
    });
  if (nodegroup && !isDnsLabel(nodegroup))
    problems.push({ field: '--nodegroup', message: 'must be a DNS-1123 label' });
}

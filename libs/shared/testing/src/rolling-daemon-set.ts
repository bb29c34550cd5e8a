import { parseAllDocuments } from 'yaml';
import { daemonSetManifest, type TestDaemonSet } from './manifests';

/** What a test varies in {@link rollingDaemonSetManifest}, beyond {@link TestDaemonSet}. */
export interface TestRollingDaemonSet extends TestDaemonSet {
  /** `rollingUpdate.maxSurge`. */
  maxSurge: number;
  /** `rollingUpdate.maxUnavailable`. */
  maxUnavailable: number;
  /** The DaemonSet's own annotations (`podmin.dev/progress-deadline`, say). */
  annotations?: Readonly<Record<string, string>>;
}

/**
 * {@link daemonSetManifest} with a RollingUpdate strategy (and the DaemonSet's annotations, when
 * given), for specs that roll a deployment out across nodes.
 */
export function rollingDaemonSetManifest(options: TestRollingDaemonSet): string {
  const { maxSurge, maxUnavailable, annotations } = options;
  const [daemonSet, ...rest] = parseAllDocuments(daemonSetManifest(options));
  if (daemonSet === undefined || !('setIn' in daemonSet))
    throw new Error('daemonSetManifest gave no DaemonSet');
  daemonSet.setIn(
    ['spec', 'updateStrategy'],
    daemonSet.createNode(
      { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } },
      { flow: true },
    ),
  );
  if (annotations !== undefined)
    daemonSet.setIn(['metadata', 'annotations'], daemonSet.createNode({ ...annotations }));
  return [daemonSet, ...rest].map((document) => document.toString()).join('');
}

import { ValidationError } from '@podmin/util-errors';
import { buildDeployment } from '../deployment';
import { stringifyCanonical } from '../yaml';

/** What a spec varies in {@link minimalDaemonSet}. */
export interface FixtureDaemonSet {
  /** DaemonSet name and its `app` label; `app` when omitted. */
  name?: string;
  /** The one container's name; the DaemonSet's name when omitted. */
  container?: string;
  /** Omitted leaves metadata without one. */
  namespace?: string;
  /** Merged over the minimal Pod spec (one container, `hello:v1`, on NodeGroup `workers`). */
  podSpec?: Record<string, unknown>;
}

/** A valid DaemonSet with one container, `hello:v1`, for NodeGroup `workers`. */
export function minimalDaemonSet(options: FixtureDaemonSet = {}): string {
  const { name = 'app', container = name, namespace } = options;
  return stringifyCanonical({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: namespace === undefined ? { name } : { name, namespace },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          nodeSelector: { 'podmin.dev/nodegroup': 'workers' },
          containers: [{ name: container, image: 'hello:v1' }],
          ...options.podSpec,
        },
      },
    },
  });
}

/**
 * A valid DaemonSet named `app` for NodeGroup `workers` whose Pod spec is `podSpec` merged over
 * a minimal one (one container, `hello:v1`); `namespace` omitted leaves metadata without one.
 */
export function daemonSetWithPodSpec(podSpec: Record<string, unknown>, namespace?: string): string {
  return minimalDaemonSet({ podSpec, namespace });
}

/** The problems `buildDeployment` finds in `text` (none when it accepts it). */
export function problemsOf(text: string): ValidationError['problems'] {
  try {
    buildDeployment(text, { source: 'app.yaml' });
  } catch (err) {
    if (err instanceof ValidationError) return err.problems;
    throw err;
  }
  return [];
}

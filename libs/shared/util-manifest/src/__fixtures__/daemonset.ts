import { ValidationError } from '@podmin/util-errors';
import { buildDeployment } from '../deployment';
import { stringifyCanonical } from '../yaml';

/**
 * A valid DaemonSet named `app` for NodeGroup `workers` whose Pod spec is `podSpec` merged over
 * a minimal one (one container, `hello:v1`); `namespace` omitted leaves metadata without one.
 */
export function daemonSetWithPodSpec(podSpec: Record<string, unknown>, namespace?: string): string {
  return stringifyCanonical({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: namespace === undefined ? { name: 'app' } : { name: 'app', namespace },
    spec: {
      selector: { matchLabels: { app: 'app' } },
      template: {
        metadata: { labels: { app: 'app' } },
        spec: {
          nodeSelector: { 'podmin.dev/nodegroup': 'workers' },
          containers: [{ name: 'app', image: 'hello:v1' }],
          ...podSpec,
        },
      },
    },
  });
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

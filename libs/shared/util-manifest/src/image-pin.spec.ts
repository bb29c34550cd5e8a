import type { ValidationError } from '@podmin/util-errors';
import { buildDeployment } from './deployment';
import { displayImages, pinPodImages, podImageUses } from './image-pin';
import { parsePodPayload } from './payload';
import { stringifyCanonical } from './yaml';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;
const APPS = 'registry.podmin.internal/apps';

type Containers = Array<{ name: string; image: string }>;

/** DaemonSet `web` for NodeGroup `default` with these containers (and Pod annotations). */
function daemonSet(
  spec: { initContainers?: Containers; containers: Containers },
  annotations?: Record<string, string>,
): string {
  return stringifyCanonical({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' }, ...(annotations === undefined ? {} : { annotations }) },
        spec: { nodeSelector: { 'podmin.dev/nodegroup': 'default' }, ...spec },
      },
    },
  });
}

const TWO = {
  initContainers: [{ name: 'setup', image: 'tools:v1' }],
  containers: [
    { name: 'web', image: 'web:v1' },
    { name: 'pinned', image: `web@${B}` },
  ],
};

const pod = () => buildDeployment(daemonSet(TWO), { source: 'web.yaml' }).pod;

describe('pinPodImages', () => {
  const digests = new Map([
    [`${APPS}/web:v1`, A],
    [`${APPS}/tools:v1`, B],
  ]);

  it('writes repository@digest for every tag and keeps the tags in podmin.dev/image-tags', () => {
    const original = pod();
    const before = stringifyCanonical(original);
    const pinned = pinPodImages(original, digests)!;
    expect(stringifyCanonical(original)).toBe(before);
    expect(podImageUses(pinned)).toEqual([
      {
        field: 'spec.template.spec.containers[0].image',
        container: 'web',
        image: `${APPS}/web@${A}`,
      },
      {
        field: 'spec.template.spec.containers[1].image',
        container: 'pinned',
        image: `${APPS}/web@${B}`,
      },
      {
        field: 'spec.template.spec.initContainers[0].image',
        container: 'setup',
        image: `${APPS}/tools@${B}`,
      },
    ]);
    const annotations = (pinned['metadata'] as { annotations: Record<string, string> }).annotations;
    expect(annotations['podmin.dev/image-tags']).toBe(
      `{"setup":"${APPS}/tools:v1","web":"${APPS}/web:v1"}`,
    );
    // What agents read back accepts it, and the display shows tag and digest.
    const text = stringifyCanonical(pinned);
    expect(parsePodPayload(text, 'p.yaml').pod).toEqual(pinned);
    expect(displayImages(pinned)).toEqual([
      `${APPS}/tools:v1@${B}`,
      `${APPS}/web:v1@${A}`,
      `${APPS}/web@${B}`,
    ]);
    // Pinning again changes nothing: an already pinned Pod stays byte-identical.
    expect(pinPodImages(pinned, new Map())).toBeUndefined();
  });

  it('drops a tag beside a digest only when it pins; web:v1@digest stays as given', () => {
    const given = buildDeployment(
      daemonSet({ containers: [{ name: 'web', image: `web:v1@${A}` }] }),
      { source: 'web.yaml' },
    ).pod;
    expect(pinPodImages(given, new Map())).toBeUndefined();
  });

  it('throws INTERNAL for a tag the caller did not resolve', () => {
    expect(() => pinPodImages(pod(), new Map())).toThrow(/was not resolved to a digest/);
  });
});

describe('podmin.dev/image-tags', () => {
  it('may not be set by a template', () => {
    const extra = { 'podmin.dev/image-tags': '{}' };
    expect(() => buildDeployment(daemonSet(TWO, extra), { source: 'web.yaml' })).toThrow(
      /spec\.template\.metadata\.annotations\["podmin\.dev\/image-tags"\].*set by podmin/,
    );
  });

  it('is checked in payloads: JSON, naming digest containers, tags of the same repository', () => {
    const pinned = pinPodImages(
      pod(),
      new Map([
        [`${APPS}/web:v1`, A],
        [`${APPS}/tools:v1`, B],
      ]),
    )!;
    const withTags = (value: string) => {
      const copy = structuredClone(pinned);
      (copy['metadata'] as { annotations: Record<string, string> }).annotations[
        'podmin.dev/image-tags'
      ] = value;
      return stringifyCanonical(copy);
    };
    const problems = (value: string) => {
      try {
        parsePodPayload(withTags(value), 'p.yaml');
        return [];
      } catch (err) {
        return (err as ValidationError).problems.map((p) => `${p.field}: ${p.message}`);
      }
    };
    expect(problems('[1]')).toEqual([
      'Pod metadata.annotations["podmin.dev/image-tags"]: must be a JSON object mapping container names to image references',
    ]);
    expect(problems(`{"ghost":"${APPS}/web:v1"}`)[0]).toContain('names container "ghost"');
    expect(problems(`{"web":"${APPS}/other:v1"}`)[0]).toContain(
      'is not a tag reference of the repository',
    );
    expect(problems(`{"web":"${APPS}/web:v2"}`)).toEqual([]);
  });
});

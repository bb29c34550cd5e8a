import { buildDeployment } from './deployment';
import { recognizedOrigin } from './origin';

describe('recognizedOrigin', () => {
  const pod = (annotations: unknown) => ({ metadata: { annotations } });

  it('returns a recognised origin', () => {
    expect(recognizedOrigin(pod({ 'podmin.dev/origin': 'install/cloudflared' }))).toBe(
      'install/cloudflared',
    );
  });

  it.each([
    ['an unknown origin', pod({ 'podmin.dev/origin': 'install/other' })],
    ['a non-string origin', pod({ 'podmin.dev/origin': 1 })],
    ['no annotation', pod({ other: 'x' })],
    ['no annotations', { metadata: {} }],
    ['no metadata', {}],
    ['not an object', 'pod'],
    ['null', null],
  ])('returns undefined for %s', (_title, value) => {
    expect(recognizedOrigin(value)).toBeUndefined();
  });

  it('reads the origin of a built Pod', () => {
    const text = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cloudflared
spec:
  selector:
    matchLabels:
      app: cloudflared
  template:
    metadata:
      labels:
        app: cloudflared
      annotations:
        podmin.dev/origin: install/cloudflared
    spec:
      nodeSelector:
        podmin.dev/nodegroup: edge
      containers:
        - name: cloudflared
          image: registry.podmin.internal/mirror/docker.io/cloudflare/cloudflared:2025.1.0
`;
    expect(recognizedOrigin(buildDeployment(text, { source: 'c.yaml' }).pod)).toBe(
      'install/cloudflared',
    );
  });
});

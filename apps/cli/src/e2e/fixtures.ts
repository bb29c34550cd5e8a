import { daemonSetYaml } from '@podmin/testing';

/** Manifests the black-box tests feed to the CLI. */
export const DAEMONSET_WITH_SERVICE = daemonSetYaml({
  namespace: 'product',
  service: { name: 'frontend', ports: [{ port: 443, targetPort: 8443 }] },
});

/** Invalid manifests, each with a fragment the error must contain. */
export const BAD_MANIFESTS: Record<string, { text: string; expect: RegExp }> = {
  'duplicate-key.yaml': {
    text: DAEMONSET_WITH_SERVICE.replace(
      '  name: web\n  namespace: product',
      '  name: web\n  name: web\n  namespace: product',
    ),
    expect: /duplicate|unique/i,
  },
  'bad-port.yaml': {
    text: DAEMONSET_WITH_SERVICE.replace('- port: 443', '- port: 70000'),
    expect: /port/,
  },
  'extra-document.yaml': {
    text: DAEMONSET_WITH_SERVICE + '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
    expect: /ConfigMap|kind/,
  },
  'affinity.yaml': {
    text: DAEMONSET_WITH_SERVICE.replace(
      '      containers:',
      '      affinity: {}\n      containers:',
    ),
    expect: /affinity/,
  },
  'external-image.yaml': {
    text: DAEMONSET_WITH_SERVICE.replace('image: hello:v1', 'image: docker.io/library/nginx:1.27'),
    expect: /podmin push/,
  },
  'system-namespace.yaml': {
    text: DAEMONSET_WITH_SERVICE.replace(/namespace: product/g, 'namespace: _system'),
    expect: /namespace/,
  },
  'unknown-field.yaml': {
    text: DAEMONSET_WITH_SERVICE.replace(
      '  selector:\n    matchLabels',
      '  colour: blue\n  selector:\n    matchLabels',
    ),
    expect: /colour/,
  },
};

// Node tier (tools/node-tier.sh): the names a real kubelet gives its /var/log/containers links
// map to the Pod, namespace, container and container ID that Fluent Bit's configuration sends.
import fs from 'node:fs';
import path from 'node:path';
import { containerLogAttributes } from './kubelet-log-name';

const dir = process.env['PODMIN_NODE_TIER_CONTAINER_LOGS'] ?? '/var/log/containers';
const containerId = process.env['PODMIN_NODE_TIER_CONTAINER_ID'] ?? '';
const pod = process.env['PODMIN_NODE_TIER_POD'] ?? '';

describe("a real kubelet's container log names", () => {
  it('name the running hello container, and map to its Pod, namespace and container', () => {
    expect(containerId).toMatch(/^[0-9a-f]{64}$/);
    const names = fs.readdirSync(dir).filter((n) => n.endsWith(`-${containerId}.log`));
    expect(names).toHaveLength(1);
    const file = path.join(dir, names[0] ?? '');
    // The link leads to the CRI log file kubelet writes under /var/log/pods.
    expect(fs.realpathSync(file)).toMatch(/^\/var\/log\/pods\/default_[^/]+\/hello\/\d+\.log$/);
    expect(containerLogAttributes(file)).toEqual({
      'k8s.pod.name': pod,
      'k8s.namespace.name': 'default',
      'k8s.container.name': 'hello',
      'container.id': containerId,
    });
  });

  it('every link kubelet made maps to attributes', () => {
    const links = fs.readdirSync(dir).filter((n) => n.endsWith('.log'));
    expect(links.length).toBeGreaterThan(0);
    for (const name of links) {
      expect([name, containerLogAttributes(path.join(dir, name))]).toEqual([
        name,
        expect.objectContaining({ 'container.id': expect.stringMatching(/^[0-9a-f]{64}$/) }),
      ]);
    }
  });
});

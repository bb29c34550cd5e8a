import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { serviceVip, sha512Hex } from '@podmin/util-desired-state';
import { deployArgs, type CliSandbox } from './cli-harness';
import { registerHistoryFlows } from './cli-history-flows';
import { BAD_MANIFESTS, DAEMONSET_WITH_SERVICE } from './fixtures';

/** How a flow reaches and inspects one kind of bucket. */
export interface StoreUnderTest {
  /** Arguments of `podmin connect` after the cluster name. */
  connectArgs: string[];
  /** Extra environment for every CLI run (e.g. the emulator endpoint). */
  env: Record<string, string>;
  /** Every object in the bucket: key → content hash. */
  snapshot(): Promise<Record<string, string>>;
  /** One object's bytes. */
  read(key: string): Promise<Buffer>;
  /** Writes one object behind the CLI's back (a damaged or foreign object). */
  write(key: string, body: string): Promise<void>;
}

/** Registers the black-box flows against one store. */
export function describeCliFlows(
  name: string,
  setup: () => Promise<{ sandbox: CliSandbox; store: StoreUnderTest }>,
): void {
  describe(`podmin against ${name}`, () => {
    let sandbox: CliSandbox;
    let store: StoreUnderTest;
    const podmin = (...args: string[]) => sandbox.run(args, store.env);

    beforeAll(async () => {
      ({ sandbox, store } = await setup());
      const connected = await podmin('connect', 'demo', ...store.connectArgs);
      expect(connected.stderr).toContain('Connected to cluster demo');
      expect(connected.code).toBe(0);
    });
    afterAll(() => sandbox.cleanup());

    it('deploys, lists and deletes as a new user would', async () => {
      const init = await podmin('init', 'web', '-g', 'default', '--image', 'hello:v1', '--service');
      expect(init.code).toBe(0);
      const manifest = path.join(sandbox.cwd, 'daemonset.yaml');
      expect(fs.readFileSync(manifest, 'utf8')).toContain('kind: DaemonSet');

      const valid = await podmin('validate', '-f', 'daemonset.yaml');
      expect(valid.stdout).toBe(
        'valid: DaemonSet default/web for NodeGroup default, Service web (443→8443/TCP)\n',
      );

      const deploy = await podmin(...deployArgs('web', 'default', '-f', 'daemonset.yaml'));
      expect(deploy.code).toBe(0);
      expect(deploy.stdout).toBe('default/web\n');
      expect(deploy.stderr).toMatch(/Committed: default\/web .*does not mean the Pod is running/s);

      const index = JSON.parse((await store.read('deployments/index.json')).toString()) as Record<
        string,
        { pod: string; service?: string }
      >;
      const entry = index['default/web'];
      expect(Object.keys(index)).toEqual(['default/web']);
      expect(entry?.pod).toMatch(/^nodegroups\/default\/pods\/sha512\/[0-9a-f]{128}\.yaml$/);
      expect(entry?.service).toMatch(/^services\/default\/web\/sha512\/[0-9a-f]{128}\.yaml$/);
      const podBytes = await store.read(entry!.pod);
      expect(entry!.pod).toContain(sha512Hex(podBytes));
      const pod = parseYaml(podBytes.toString()) as {
        metadata: { annotations: Record<string, string> };
        spec: { containers: Array<{ image: string; imagePullPolicy: string }> };
      };
      expect(pod.metadata.annotations['podmin.dev/service']).toBe('web');
      expect(pod.spec.containers[0]).toMatchObject({
        image: 'registry.podmin.internal/apps/hello:v1',
        imagePullPolicy: 'Always',
      });

      const again = await podmin(...deployArgs('web', 'default', '-f', 'daemonset.yaml'));
      expect(again.stderr).toContain('unchanged');

      const list = await podmin('list');
      expect(list.stdout.split('\n')[0]).toMatch(
        /^NAME\s+NAMESPACE\s+NODEGROUP\s+SERVICE\s+ORIGIN$/,
      );
      expect(list.stdout.split('\n')[1]).toMatch(/^web\s+default\s+default\s+web\s+-$/);
      const json = JSON.parse((await podmin('list', '-o', 'json')).stdout) as Array<
        Record<string, unknown>
      >;
      expect(json).toEqual([
        expect.objectContaining({
          name: 'web',
          namespace: 'default',
          nodegroup: 'default',
          service: 'web',
          origin: null,
          vip: serviceVip('demo', 'default', 'web'),
        }),
      ]);
      expect(json[0]?.['vip']).toMatch(/^fd50:6f64:6d69:/);

      const removed = await podmin('delete', 'web', '-g', 'default');
      expect(removed.code).toBe(0);
      expect((await podmin('list', '-o', 'json')).stdout.trim()).toBe('[]');
      const missing = await podmin('delete', 'web', '-g', 'default');
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('no such deployment');
    });

    it('commits a file with a Service under its own namespace and name', async () => {
      fs.writeFileSync(path.join(sandbox.cwd, 'product.yaml'), DAEMONSET_WITH_SERVICE);
      const deploy = await podmin(
        ...deployArgs(
          'web',
          'default',
          '-f',
          'product.yaml',
          '--service',
          '--image',
          'web=hello:v2',
        ),
      );
      expect(deploy.code).toBe(0);
      const index = JSON.parse((await store.read('deployments/index.json')).toString()) as Record<
        string,
        { service?: string }
      >;
      expect(index['default/web']?.service).toMatch(/^services\/product\/frontend\/sha512\//);
      const row = JSON.parse((await podmin('list', '-o', 'json')).stdout) as Array<
        Record<string, unknown>
      >;
      expect(row).toEqual([
        expect.objectContaining({ name: 'web', namespace: 'product', service: 'frontend' }),
      ]);
      // Another deployment may not take over product/frontend.
      fs.writeFileSync(
        path.join(sandbox.cwd, 'steal.yaml'),
        DAEMONSET_WITH_SERVICE.replace(/name: web$/m, 'name: thief'),
      );
      const before = await store.snapshot();
      const steal = await podmin(...deployArgs('thief', 'default', '-f', 'steal.yaml'));
      expect(steal.code).toBe(1);
      expect(steal.stderr).toContain('already owned by deployment default/web');
      expect(await store.snapshot()).toEqual(before);
      expect((await podmin('delete', 'web', '-g', 'default')).code).toBe(0);
    });

    const rejections: Array<[string, string[], RegExp]> = [
      ['no image for the built-in manifest', deployArgs('web', 'default'), /--image/],
      [
        'an external image',
        deployArgs('web', 'default', '--image', 'docker.io/library/nginx:1.27'),
        /podmin push/,
      ],
      [
        'a zero CPU limit',
        deployArgs('web', 'default', '--image', 'hello:v1', '--cpu', '0'),
        /--cpu/,
      ],
      [
        'a malformed memory limit',
        deployArgs('web', 'default', '--image', 'hello:v1', '--memory', 'lots'),
        /--memory/,
      ],
      [
        'bare and named images mixed',
        deployArgs('web', 'default', '--image', 'hello:v1', '--image', 'side=hello:v2'),
        /--image/,
      ],
      [
        'a bad port mapping',
        deployArgs('web', 'default', '--image', 'hello:v1', '--service', '--port', '80:0'),
        /--port/,
      ],
      [
        '--port with --file',
        deployArgs('web', 'default', '-f', 'product.yaml', '--port', '80:8080'),
        /--port/,
      ],
      [
        '--cpu with --file',
        deployArgs('web', 'default', '-f', 'product.yaml', '--cpu', '1'),
        /--cpu/,
      ],
      [
        'a NodeGroup mismatch',
        deployArgs('web', 'workers', '-f', 'product.yaml'),
        /nodegroup|nodeSelector/i,
      ],
      ['a name mismatch', deployArgs('other', 'default', '-f', 'product.yaml'), /metadata\.name/],
      [
        'an unknown container override',
        deployArgs('web', 'default', '-f', 'product.yaml', '--image', 'nope=hello:v2'),
        /nope/,
      ],
      ['a missing file', deployArgs('web', 'default', '-f', 'absent.yaml'), /absent\.yaml/],
      [
        '--service without a Service',
        deployArgs('web', 'default', '-f', 'no-service.yaml', '--service'),
        /--service/,
      ],
      ...Object.entries(BAD_MANIFESTS).map(
        ([file, { expect: pattern }]): [string, string[], RegExp] => [
          file,
          deployArgs('web', 'default', '-f', file),
          pattern,
        ],
      ),
    ];

    // A flag's value refused is a usage error (exit 2); a manifest or file refused is the
    // operation failing on its input (exit 1).
    const usage = new Set([
      'no image for the built-in manifest',
      'an external image',
      'a zero CPU limit',
      'a malformed memory limit',
      'bare and named images mixed',
      'a bad port mapping',
      '--port with --file',
      '--cpu with --file',
    ]);

    it.each(rejections)(
      'rejects %s with a clear error and leaves the bucket untouched',
      async (label, args, pattern) => {
        fs.writeFileSync(path.join(sandbox.cwd, 'product.yaml'), DAEMONSET_WITH_SERVICE);
        fs.writeFileSync(
          path.join(sandbox.cwd, 'no-service.yaml'),
          DAEMONSET_WITH_SERVICE.split('---')[0] as string,
        );
        for (const [file, { text }] of Object.entries(BAD_MANIFESTS))
          fs.writeFileSync(path.join(sandbox.cwd, file), text);
        const before = await store.snapshot();
        const result = await podmin(...args);
        expect({ label, code: result.code }).toEqual({ label, code: usage.has(label) ? 2 : 1 });
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(/^Error: /m);
        expect(result.stderr).toMatch(pattern);
        expect(result.stderr).not.toMatch(/^\s+at /m);
        expect(await store.snapshot()).toEqual(before);
      },
    );

    registerHistoryFlows({ podmin, store: () => store });

    it('keeps all twenty entries when twenty deploys run at once', async () => {
      const names = Array.from({ length: 20 }, (_, i) => `app-${i}`);
      const results = await Promise.all(
        names.map((n) => podmin(...deployArgs(n, 'race', '--image', `hello:${n}`))),
      );
      for (const r of results) expect(r).toMatchObject({ code: 0 });
      const index = JSON.parse((await store.read('deployments/index.json')).toString()) as Record<
        string,
        { pod: string }
      >;
      for (const n of names) {
        const entry = index[`race/${n}`];
        expect(entry).toBeDefined();
        const bytes = await store.read(entry!.pod);
        expect(entry!.pod).toBe(`nodegroups/race/pods/sha512/${sha512Hex(bytes)}.yaml`);
        expect(bytes.toString()).toContain(`registry.podmin.internal/apps/hello:${n}`);
      }
    });
  });
}

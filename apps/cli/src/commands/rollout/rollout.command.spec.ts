import fs from 'node:fs';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { run } from '../../cli';
import { createCliContext } from '../../cli-context';
import { connectAndDeployWeb } from '../../__fixtures__/in-process';
import { useTempHome } from '@podmin/testing';

describe('podmin rollout (in process)', () => {
  const temp = useTempHome('podmin-rollout-cli');
  const home = () => temp().home;
  const env = () => temp().env;
  const stateFile = () =>
    path.join(home(), 'd', 'podmin', 'buckets', 'demo', 'dns', 'rollouts.json');
  let reporter: RecordingReporter;
  beforeEach(() => (reporter = new RecordingReporter()));

  it('pauses, resumes and restarts through the registered commands', async () => {
    const ctx = createCliContext(reporter, env());
    await connectAndDeployWeb(ctx);
    expect(await run(['rollout', 'pause', 'web', '-g', 'default'], ctx)).toBe(0);
    expect(reporter.infos.at(-1)).toBe(
      'rollout of web paused: nodes already moving finish; no new node moves until `podmin rollout resume web -g default`',
    );
    expect(JSON.parse(fs.readFileSync(stateFile(), 'utf8'))).toMatchObject({
      deployments: { 'default/web': { paused: true, attempt: 1 } },
    });
    expect(await run(['rollout', 'resume', 'web', '-g', 'default'], ctx)).toBe(0);
    expect(JSON.parse(fs.readFileSync(stateFile(), 'utf8'))).toMatchObject({
      deployments: { 'default/web': { paused: false } },
    });
    reporter.results.length = 0;
    expect(await run(['rollout', 'restart', 'web', '-g', 'default'], ctx)).toBe(0);
    expect(reporter.results[0]).toMatch(/^[0-9a-f]{12}$/);
    expect(reporter.infos.at(-1)).toMatch(/^Restarted default\/web: revision [0-9a-f]{12} → /);
  });

  it('refuses an unknown deployment (1) and a missing -g (2)', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
    for (const sub of ['pause', 'resume', 'restart']) {
      expect(await run(['rollout', sub, 'nope', '-g', 'default'], ctx)).toBe(1);
      expect(reporter.infos.join('\n')).toContain(
        'default/nope: no such deployment in the desired-state index',
      );
      expect(await run(['rollout', sub, 'web'], ctx)).toBe(2);
      expect(reporter.infos.join('\n')).toContain('Missing required argument: nodegroup');
    }
    expect(fs.existsSync(stateFile())).toBe(false);
  });

  it('refuses secret update --restart without the deployment (2), before any change', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
    const file = path.join(home(), 'value');
    fs.writeFileSync(file, 'v');
    const update = ['secret', 'update', 'k', '--from-file', file, '--restart'];
    expect(await run([...update, '--for', 'web'], ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toContain(
      '--restart needs the deployment whose Pod reads the secret: --for NAME -g NODEGROUP',
    );
    expect(await run([...update, '-g', 'default'], ctx)).toBe(2);
    expect(await run([...update, '--system'], ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toContain('it cannot be used with --system');
    expect(await run([...update, '--for', 'nope', '-g', 'default'], ctx)).toBe(1);
    expect(reporter.infos.join('\n')).toContain('default/nope: no such deployment');
  });

  it('restarts the deployment after secret update --restart', async () => {
    const ctx = createCliContext(reporter, env());
    await connectAndDeployWeb(ctx);
    const file = path.join(home(), 'value');
    fs.writeFileSync(file, 'one');
    expect(await run(['secret', 'create', 'k', '--for', 'web', '--from-file', file], ctx)).toBe(0);
    fs.writeFileSync(file, 'two');
    reporter.results.length = 0;
    expect(
      await run(
        [
          'secret',
          'update',
          'k',
          '--for',
          'web',
          '-g',
          'default',
          '--from-file',
          file,
          '--restart',
        ],
        ctx,
      ),
    ).toBe(0);
    expect(reporter.infos.slice(-2)).toEqual([
      'Updated k for pod web in namespace default in aws-parameter-store (3 bytes)',
      expect.stringMatching(
        /^Restarted default\/web: revision [0-9a-f]{12} → [0-9a-f]{12} /,
      ) as string,
    ]);
    expect(reporter.results).toEqual([expect.stringMatching(/^[0-9a-f]{12}$/) as string]);
  });
});

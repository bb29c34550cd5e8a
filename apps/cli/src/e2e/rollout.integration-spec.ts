import fs from 'node:fs';
import path from 'node:path';
import { INDEX_KEY, parseIndex } from '@podmin/util-desired-state';
import { podRevision, receiptKey } from '@podmin/util-receipts';
import {
  RESTARTED_AT_ANNOTATION,
  ROLLOUT_STATE_KEY,
  newRollout,
  parseRolloutState,
  serializeRolloutState,
} from '@podmin/util-rollout';
import {
  agentReceipt,
  deployWebArgs,
  expectExit,
  makeSandbox,
  type CliSandbox,
} from './cli-harness';

/** Black-box: `podmin rollout pause|resume|restart`, `status` and `deploy --wait` on a local bucket. */
describe('rollouts on the local provider', () => {
  let sandbox: CliSandbox;
  let bucket: string;
  const read = (key: string) => fs.readFileSync(path.join(bucket, key));
  const write = (key: string, body: string) => {
    fs.mkdirSync(path.dirname(path.join(bucket, key)), { recursive: true });
    fs.writeFileSync(path.join(bucket, key), body);
  };
  const webPod = () => parseIndex(read(INDEX_KEY))['default/web']?.pod ?? '';
  const state = () => parseRolloutState(read(ROLLOUT_STATE_KEY));
  /** A fresh receipt of `node` running `revision` Ready, as its agent would write it. */
  const receipt = (node: string, revision: string) =>
    write(
      receiptKey('default', node),
      agentReceipt(node, [{ deployment: 'default/web', revision, ready: true, restarts: 0 }], 'ok'),
    );
  const halt = {
    node: 'i-abc',
    reason: 'Pod not available within 5m0s: CrashLoopBackOff (container app)',
    time: '2024-01-01T00:05:00.000Z',
  };

  beforeAll(async () => {
    sandbox = makeSandbox();
    bucket = path.join(sandbox.dataHome, 'podmin', 'buckets', 'demo');
    expect((await sandbox.run(['connect', 'demo', '--provider', 'local'])).code).toBe(0);
    expect((await sandbox.run(deployWebArgs('hello:v1'))).code).toBe(0);
  });
  afterAll(() => sandbox.cleanup());

  it('pause and resume write the rollout state', async () => {
    const pause = await sandbox.run(['rollout', 'pause', 'web', '-g', 'default']);
    expect(pause.code).toBe(0);
    expect(pause.stdout.trim()).toBe('default/web');
    expect(pause.stderr).toContain(
      'rollout of web paused: nodes already moving finish; no new node moves until `podmin rollout resume web -g default`',
    );
    expect(state().deployments['default/web']).toEqual(newRollout(webPod(), true));

    write(
      ROLLOUT_STATE_KEY,
      serializeRolloutState({
        schema: 1,
        deployments: { 'default/web': { ...newRollout(webPod(), true), halted: halt } },
      }),
    );
    const resume = await sandbox.run(['rollout', 'resume', 'web', '-g', 'default']);
    expect(resume.code).toBe(0);
    expect(resume.stderr).toContain('rollout of web resumed after its halt on node i-abc');
    expect(state().deployments['default/web']).toEqual({ ...newRollout(webPod()), attempt: 2 });
  });

  it('restart commits a new revision of the same template and records it in history', async () => {
    const before = webPod();
    const restart = await sandbox.run(['rollout', 'restart', 'web', '-g', 'default']);
    expect(restart.code).toBe(0);
    const after = webPod();
    expect(after).not.toBe(before);
    expect(restart.stdout.trim()).toBe(podRevision(after));
    expect(read(after).toString()).toContain(`${RESTARTED_AT_ANNOTATION}:`);
    const history = await sandbox.run(['history', 'web', '-g', 'default', '-o', 'json']);
    expect(history.code).toBe(0);
    expect(
      (
        JSON.parse(history.stdout) as Array<{
          pod: string;
          action: string | null;
          current: boolean;
        }>
      ).map((r) => [r.pod, r.action, r.current]),
    ).toEqual([
      [after, 'deploy', true],
      [before, null, false],
    ]);
  });

  it('status shows the rollout fields, paused and the halt', async () => {
    receipt('i-abc', podRevision(webPod()));
    receipt('i-def', 'aaaaaaaaaaaa');
    write(
      ROLLOUT_STATE_KEY,
      serializeRolloutState({
        schema: 1,
        deployments: { 'default/web': { ...newRollout(webPod(), true), halted: halt } },
      }),
    );
    const json = await sandbox.run(['status', 'web', '-g', 'default', '-o', 'json']);
    expect(json.code).toBe(0);
    const [web] = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(web).toMatchObject({ desired: podRevision(webPod()), live: 2, ready: 1 });
    expect(web?.['rollout']).toEqual({
      target: podRevision(webPod()),
      updated: 1,
      available: 1,
      total: 2,
      paused: true,
      halted: halt,
    });
    const table = await sandbox.run(['status']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(
      `web rollout to ${podRevision(webPod())}: 1/2 updated, 1 available, paused; halted: i-abc: ${halt.reason}`,
    );

    write(ROLLOUT_STATE_KEY, '{"schema": 1');
    const malformed = await sandbox.run(['status']);
    expect(malformed.code).toBe(0);
    expect(malformed.stderr).toContain(`Ignoring the rollout state ${ROLLOUT_STATE_KEY}`);
    expect(malformed.stdout).toContain(`web rollout to ${podRevision(webPod())}: 1/2 updated`);
  });

  it('deploy --wait fails at once naming the node a halted rollout stopped at', async () => {
    const v1 = (await sandbox.run(['history', 'web', '-g', 'default', '-o', 'json'])).stdout;
    const original = (JSON.parse(v1) as Array<{ pod: string }>).at(-1)?.pod ?? '';
    write(
      ROLLOUT_STATE_KEY,
      serializeRolloutState({
        schema: 1,
        deployments: { 'default/web': { ...newRollout(original), halted: halt } },
      }),
    );
    const started = Date.now();
    const deploy = await sandbox.run(deployWebArgs('hello:v1', '--wait', '--timeout', '20s'));
    expect(deploy.code).toBe(1);
    expect(webPod()).toBe(original);
    expect(deploy.stderr).toContain(
      `Error: waiting for default/web: rollout halted: node i-abc: ${halt.reason}`,
    );
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('refuses bad input: an unknown deployment, a missing -g, --restart without the deployment', async () => {
    const unknown = await sandbox.run(['rollout', 'restart', 'nope', '-g', 'default']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      'Error: restarting default/nope: no such deployment in the desired-state index',
    );
    expect(unknown.stderr).toContain('podmin list');
    const refused: Array<[string[], string]> = [
      [['rollout', 'pause', 'web'], 'Missing required argument: nodegroup'],
      [
        ['secret', 'update', 'k', '--for', 'web', '--from-stdin', '--restart'],
        '--restart needs the deployment whose Pod reads the secret',
      ],
    ];
    for (const [args, message] of refused) await expectExit(sandbox, args, 2, message);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { useTempHome } from '@podmin/testing';
import { parseSignedIndex, serializeIndex } from '@podmin/util-desired-state';
import { parseDeployers, verifyIndexSignature } from '@podmin/util-trust';
import { run } from '../../cli';
import { createCliContext } from '../../cli-context';

describe('podmin trust and the signing flags (in process, local provider)', () => {
  const temp = useTempHome('podmin-trust-cli');
  let reporter: RecordingReporter;
  beforeEach(() => (reporter = new RecordingReporter()));
  const deploy = ['deploy', '--no-preflight', '--no-pin', 'web', '-g', 'default', '--image'];

  it('refuses conflicting or misplaced signer flags as usage errors', async () => {
    const ctx = createCliContext(reporter, temp().env);
    expect(
      await run([...deploy, 'hello:v1', '--signing-key', 'a.key', '--kms-key', 'x'], ctx),
    ).toBe(2);
    expect(reporter.infos.join('\n')).toContain('mutually exclusive');
    reporter.infos.length = 0;
    expect(await run(['secret', 'update', 'k', '--for', 'web', '--signer', 'ci'], ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toContain('use them with --restart');
    reporter.infos.length = 0;
    expect(await run(['trust', 'add', 'ci'], ctx)).toBe(2);
    expect(reporter.infos.join('\n')).toContain(
      'exactly one of --public-key FILE and --kms-key ARN',
    );
  });

  it('adds the first deployer with --sign, and a deploy signed through PODMIN_SIGNING_KEY verifies', async () => {
    const { home, env } = temp();
    const bucket = path.join(home, 'bucket');
    const ctx = createCliContext(reporter, env);
    expect(await run(['connect', 'demo', '--provider', 'local', '--bucket', bucket], ctx)).toBe(0);
    expect(await run([...deploy, 'hello:v1'], ctx)).toBe(0);
    expect(await run(['trust', 'keygen', '--name', 'alice'], ctx)).toBe(0);
    const pub = reporter.results.at(-1) as string;
    // A second, untrusted key, kept outside the trust directory (so alice's stays the default).
    const other = path.join(home, 'bob.key');
    expect(await run(['trust', 'keygen', '--name', 'bob'], ctx)).toBe(0);
    fs.renameSync(path.join(path.dirname(pub), 'bob.key'), other);
    expect(await run(['trust', 'add', 'alice', '--public-key', pub, '--sign'], ctx)).toBe(0);
    expect(reporter.warnings.join('\n')).toContain('Enforcement is now on for cluster demo');
    const secrets = JSON.stringify(
      JSON.parse(
        fs.readFileSync(path.join(env['XDG_DATA_HOME']!, 'podmin', 'secrets', 'demo.json'), 'utf8'),
      ),
    );
    expect(secrets).toContain('/demo/_system/deployers');

    const signedCtx = createCliContext(reporter, {
      ...env,
      PODMIN_SIGNING_KEY: path.join(path.dirname(pub), 'alice.key'),
    });
    expect(await run([...deploy, 'hello:v2'], signedCtx)).toBe(0);
    const text = fs.readFileSync(path.join(bucket, 'deployments', 'index.json'), 'utf8');
    const { index, signature } = parseSignedIndex(text);
    const store = await ctx.secretStores(await ctx.currentContext())('aws-parameter-store');
    const deployers = parseDeployers(await store.get('/demo/_system/deployers'), 'list');
    expect(
      verifyIndexSignature({
        cluster: 'demo',
        entriesText: serializeIndex(index),
        signature,
        deployers,
      }),
    ).toMatchObject({ trusted: true, signer: 'alice' });

    // bob's key is not trusted: its signature is written, and nodes would refuse it.
    expect(await run([...deploy, 'hello:v3', '--signing-key', other], ctx)).toBe(0);
    const byBob = parseSignedIndex(fs.readFileSync(path.join(bucket, 'deployments', 'index.json')));
    expect(
      verifyIndexSignature({
        cluster: 'demo',
        entriesText: serializeIndex(byBob.index),
        signature: byBob.signature,
        deployers,
      }),
    ).toMatchObject({
      trusted: false,
      reason: expect.stringContaining('"bob", who is not a trusted deployer'),
    });
  });
});

import path from 'node:path';
import { RecordingReporter } from '@podmin/cli-util-io';
import { useTempHome } from '@podmin/testing';
import { run } from '../cli';
import { createCliContext } from '../cli-context';
import { bucketWithSigning } from './signing-options';

describe('bucketWithSigning (in process, local provider)', () => {
  const temp = useTempHome('podmin-signing-options');

  it('opens the current bucket, unsigned ({}) without a key, signed by a --signing-key', async () => {
    const { home, env } = temp();
    const reporter = new RecordingReporter();
    const ctx = createCliContext(reporter, env);
    expect(
      await run(['connect', 'demo', '--provider', 'local', '--bucket', path.join(home, 'b')], ctx),
    ).toBe(0);

    const unsigned = await bucketWithSigning(ctx, {}, 'deleting default/web');
    expect(unsigned.context.cluster).toBe('demo');
    expect(await unsigned.store.get('deployments/index.json').catch((e: unknown) => e)).toEqual(
      expect.objectContaining({ code: 'OBJECT_NOT_FOUND' }),
    );
    expect(unsigned.signed).toEqual({});

    expect(await run(['trust', 'keygen', '--name', 'alice'], ctx)).toBe(0);
    const key = path.join(path.dirname(reporter.results.at(-1) as string), 'alice.key');
    const signed = await bucketWithSigning(ctx, { 'signing-key': key }, 'deleting default/web');
    expect(signed.signed.signing).toMatchObject({ cluster: 'demo', signer: { signer: 'alice' } });
  });
});

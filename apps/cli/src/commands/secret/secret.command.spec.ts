import fs from 'node:fs';
import path from 'node:path';
import yargs from 'yargs/yargs';
import { RecordingReporter } from '@podmin/cli-util-io';
import type { SecretValueInput } from '@podmin/cli-feature-secrets';
import { run } from '../../cli';
import { createCliContext } from '../../cli-context';
import { secretCommand } from './secret.command';
import { useTempHome } from '@podmin/testing';

describe('podmin secret (in process)', () => {
  const temp = useTempHome('podmin-secret-cli');
  const home = () => temp().home;
  const env = () => temp().env;
  let reporter: RecordingReporter;
  beforeEach(() => (reporter = new RecordingReporter()));

  it('needs a current context', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['secret', 'list'], ctx)).toBe(1);
    expect(reporter.infos.join('\n')).toContain('needs a current cluster context');
  });

  it('creates from a file and lists through the registered commands', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
    const file = path.join(home(), 'value');
    fs.writeFileSync(file, 'hidden-value');
    expect(
      await run(
        ['secret', 'create', 'api-key', '--for', 'web', '-n', 'product', '--from-file', file],
        ctx,
      ),
    ).toBe(0);
    expect(await run(['secret', 'list', '-n', 'product'], ctx)).toBe(0);
    expect(reporter.stdout).toContain('product     web   api-key   aws-parameter-store');
    expect([...reporter.infos, reporter.stdout].join('\n')).not.toContain('hidden-value');
  });

  it('shows usage for conflicting value sources and an unknown provider, exiting 2', async () => {
    const ctx = createCliContext(reporter, env());
    expect(
      await run(['secret', 'create', 'k', '--for', 'web', '--from-file', 'f', '--from-stdin'], ctx),
    ).toBe(2);
    expect(reporter.infos.join('\n')).toContain('mutually exclusive');
    expect(await run(['secret', 'create', 'k', '--for', 'web', '--provider', 'vault'], ctx)).toBe(
      2,
    );
    expect(reporter.infos.join('\n')).toContain('Invalid values');
  });

  it('passes an injected input to create and destroy', async () => {
    const ctx = createCliContext(reporter, env());
    expect(await run(['connect', 'demo', '--provider', 'local'], ctx)).toBe(0);
    const prompts: string[] = [];
    const input: SecretValueInput = {
      interactive: true,
      readStdin: () => Promise.reject(new Error('unused')),
      readFile: () => Promise.reject(new Error('unused')),
      promptHidden: (question) => {
        prompts.push(question);
        return Promise.resolve(Buffer.from('typed'));
      },
    };
    reporter.answer = true;
    await yargs(['secret', 'create', 'k', '--for', 'web'])
      .command(secretCommand(ctx, input))
      .strict()
      .parseAsync();
    await yargs(['secret', 'destroy', 'k', '--for', 'web'])
      .command(secretCommand(ctx, input))
      .strict()
      .parseAsync();
    expect(prompts).toEqual(['Value for k for pod web in namespace default (input hidden): ']);
    expect(reporter.infos.slice(-2)).toEqual([
      'Created k for pod web in namespace default in aws-parameter-store (5 bytes)',
      'Destroyed k for pod web in namespace default in aws-parameter-store',
    ]);
  });
});

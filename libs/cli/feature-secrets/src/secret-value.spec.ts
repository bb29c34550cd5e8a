import { FakeValueInput } from './__fakes__/fakes';
import { readSecretValue } from './secret-value';

describe('readSecretValue', () => {
  it('reads a file or stdin exactly', async () => {
    const input = new FakeValueInput(false, { stdin: 'a\n', files: { f: 'b\n' } });
    expect((await readSecretValue({ fromFile: 'f' }, input, 'k')).toString()).toBe('b\n');
    expect((await readSecretValue({ fromStdin: true }, input, 'k')).toString()).toBe('a\n');
  });

  it('prompts on a terminal when no source is given', async () => {
    const input = new FakeValueInput(true, { typed: 'typed' });
    expect((await readSecretValue({}, input, 'db for pod web')).toString()).toBe('typed');
    expect(input.used).toEqual(['prompt:Value for db for pod web (input hidden): ']);
  });

  it('fails clearly without a terminal or with two sources', async () => {
    await expect(readSecretValue({}, new FakeValueInput(false), 'k')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      hint: expect.stringContaining('--from-stdin'),
    });
    await expect(
      readSecretValue({ fromFile: 'f', fromStdin: true }, new FakeValueInput(true), 'k'),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

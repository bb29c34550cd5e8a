import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { makeTempDir, type TempDir } from '@podmin/testing';
import { FLUENT_BIT_UNIT, NoHostLogExporter, SystemdLogExporter } from './systemd-log-exporter';

let dir: TempDir;

beforeEach(async () => {
  dir = await makeTempDir('systemd-log-exporter');
});

afterEach(() => dir.cleanup());

/** A stand-in systemctl that records its arguments and answers like systemd would. */
async function standIn(exitCode: number, stderr = ''): Promise<string> {
  const file = path.join(dir.path, 'systemctl');
  await writeFile(
    file,
    `#!/bin/sh\necho "$@" >> '${dir.path}/calls'\nprintf '%s' '${stderr}' >&2\nexit ${exitCode}\n`,
  );
  await chmod(file, 0o755);
  return file;
}

describe('SystemdLogExporter', () => {
  it('runs systemctl try-restart fluent-bit.service (never start)', async () => {
    const exporter = new SystemdLogExporter(FLUENT_BIT_UNIT, await standIn(0));
    expect(await exporter.restart()).toEqual({ outcome: 'restarted' });
    expect(await readFile(path.join(dir.path, 'calls'), 'utf8')).toBe(
      'try-restart fluent-bit.service\n',
    );
  });

  it("reports systemctl's failure with its exit code and what it said", async () => {
    const exporter = new SystemdLogExporter(
      FLUENT_BIT_UNIT,
      await standIn(1, 'Job for fluent-bit.service failed.'),
    );
    expect(await exporter.restart()).toEqual({
      outcome: 'failed',
      error:
        'systemctl try-restart fluent-bit.service: exit code 1: Job for fluent-bit.service failed.',
    });
  });

  it('skips the restart where there is no systemctl', async () => {
    const missing = path.join(dir.path, 'no-such-systemctl');
    expect(await new SystemdLogExporter(FLUENT_BIT_UNIT, missing).restart()).toEqual({
      outcome: 'skipped',
      why: `${missing} not found`,
    });
  });
});

describe('NoHostLogExporter', () => {
  it('never restarts anything and says why', async () => {
    expect(await new NoHostLogExporter('node root /tmp/n is not the host’s').restart()).toEqual({
      outcome: 'skipped',
      why: 'node root /tmp/n is not the host’s',
    });
  });
});

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

describe('bench/list.mjs --quick', () => {
  it('lists a fleet with one read per distinct payload cold and only the index warm', async () => {
    const repo = path.resolve(__dirname, '../../../..');
    // The bench runs the built CLI on the local provider and on the S3 emulator (its own, or
    // the one PODMIN_TEST_AWS_ENDPOINT names), counting every object-store request.
    const { stdout } = await promisify(execFile)(process.execPath, ['bench/list.mjs', '--quick'], {
      cwd: repo,
      timeout: 300_000,
    });
    // Timings on a shared machine are not asserted; request counts are exact. Quick: 5 apps.
    for (const provider of ['local', 's3 emulator']) {
      for (const size of [10, 100]) {
        const line = (what: string): string => {
          const found = stdout
            .split('\n')
            .find((l) => l.startsWith(`${what} (${provider}, ${size} entries): median `));
          expect(found).toBeDefined();
          return found ?? '';
        };
        // Cold: the index and the 5 distinct Pod payloads, whatever the number of entries.
        expect(line('list cold')).toMatch(/ 6 requests \(6 GET\)$/);
        // Warm: every payload from the verified cache, so only the index.
        expect(line('list warm')).toMatch(/ 1 requests \(1 GET\)$/);
        const deploy = /(\d+) requests \((.*)\)$/.exec(line('deploy'));
        // A new Pod payload: created once, and the index written once.
        expect(deploy?.[2]).toMatch(/(^|, )2 PUT$/);
        if (provider === 's3 emulator') expect(Number(deploy?.[1])).toBeLessThanOrEqual(5);
      }
    }
    expect(stdout).toContain('quick run: budgets apply at 10,000 entries and are not checked');
  }, 320_000);
});

import fs from 'node:fs';
import path from 'node:path';
import { receiptKey } from '@podmin/util-receipts';
import {
  agentReceipt as receipt,
  connectedLocalSandbox,
  deployWebArgs,
  type CliSandbox,
} from './cli-harness';

// A node that is gone leaves its receipt behind: status hides it after the retention window
// (default 24 h) and says how many it hid; --prune deletes exactly those receipts.
describe('podmin status --retention and --prune (bundled CLI, local bucket)', () => {
  let sandbox: CliSandbox;
  let bucket: string;
  const file = (node: string): string => path.join(bucket, receiptKey('default', node));

  beforeAll(async () => {
    ({ sandbox, bucket } = await connectedLocalSandbox());
    expect((await sandbox.run(deployWebArgs('hello:v1'))).code).toBe(0);
    fs.mkdirSync(path.dirname(file('x')), { recursive: true });
    fs.writeFileSync(file('node-old'), receipt('node-old'));
    fs.writeFileSync(file('node-fresh'), receipt('node-fresh'));
    // The directory bucket's object time is the file's: two days ago.
    const old = new Date(Date.now() - 48 * 3_600_000);
    fs.utimesSync(file('node-old'), old, old);
  });
  afterAll(() => sandbox.cleanup());

  it('hides the old node from the table and says how many it hid', async () => {
    const table = await sandbox.run(['status']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^web\s+default\s+node-fresh\s/m);
    expect(table.stdout).not.toContain('node-old');
    expect(table.stderr).toContain(
      '1 node hidden: no receipt for more than 24h (default/node-old); `podmin status --prune` deletes its receipt',
    );
    const json = await sandbox.run(['status', '-o', 'json']);
    const [web] = JSON.parse(json.stdout) as Array<{
      dropped: number;
      nodes: Array<{ node: string }>;
    }>;
    expect(web?.dropped).toBe(1);
    expect(web?.nodes.map((n) => n.node)).toEqual(['node-fresh']);
    // A window longer than its age shows it again, as stale.
    const longer = await sandbox.run(['status', '--retention', '72h']);
    expect(longer.stdout).toMatch(/^web\s+default\s+node-old\s.*\sstale\s/m);
    expect(longer.stderr).not.toContain('hidden');
  });

  it('refuses a window shorter than three heartbeats, or not a duration, with exit 2', async () => {
    const short = await sandbox.run(['status', '--retention', '10m']);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--retention: "10m" is shorter than 15m');
    const bad = await sandbox.run(['status', '--retention', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--retention: "yesterday" is not a duration');
  });

  it('--prune deletes only the old receipt; the fresh one stays byte for byte', async () => {
    const fresh = fs.readFileSync(file('node-fresh'));
    const freshTime = fs.statSync(file('node-fresh')).mtimeMs;
    const pruned = await sandbox.run(['status', '--prune', '-o', 'json']);
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.stdout)).toEqual([
      {
        key: 'status/default/node-old.json',
        nodegroup: 'default',
        node: 'node-old',
        ageMs: expect.any(Number) as number,
      },
    ]);
    expect(pruned.stderr).toContain('Deleted 1 receipt older than 24h.');
    expect(fs.existsSync(file('node-old'))).toBe(false);
    expect(fs.readFileSync(file('node-fresh')).equals(fresh)).toBe(true);
    expect(fs.statSync(file('node-fresh')).mtimeMs).toBe(freshTime);
    const again = await sandbox.run(['status', '--prune']);
    expect([again.code, again.stdout]).toEqual([0, '']);
    expect(again.stderr).toContain('Deleted 0 receipts older than 24h.');
    const status = await sandbox.run(['status', '-o', 'json']);
    expect((JSON.parse(status.stdout) as Array<{ dropped: number }>)[0]?.dropped).toBe(0);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { makeSandbox, snapshotDir } from './cli-harness';
import { describeCliFlows } from './cli-flows';

describeCliFlows('a local directory bucket', () => {
  const sandbox = makeSandbox();
  const bucket = path.join(sandbox.dataHome, 'podmin', 'buckets', 'demo');
  return Promise.resolve({
    sandbox,
    store: {
      connectArgs: ['--provider', 'local'],
      env: {},
      snapshot: () => Promise.resolve(snapshotDir(bucket)),
      read: (key: string) => Promise.resolve(fs.readFileSync(path.join(bucket, key))),
      write: (key: string, body: string) => {
        fs.mkdirSync(path.dirname(path.join(bucket, key)), { recursive: true });
        fs.writeFileSync(path.join(bucket, key), body);
        return Promise.resolve();
      },
    },
  });
});

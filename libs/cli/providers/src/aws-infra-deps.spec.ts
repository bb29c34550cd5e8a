import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkAgentSource } from './aws-infra-deps';

describe('checkAgentSource', () => {
  it('accepts a podmin checkout and names the flag for any other directory', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-checkout-'));
    try {
      let thrown: unknown;
      try {
        checkAgentSource(dir);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toMatchObject({
        code: 'INVALID_ARGUMENT',
        problems: [{ field: '--agent-source' }],
      });
      fs.mkdirSync(path.join(dir, 'tools/scripts'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'tools/scripts/bundle.mjs'), '');
      expect(() => checkAgentSource(dir)).not.toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

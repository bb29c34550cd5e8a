import { hasCode } from '@podmin/util-errors';
import { parseChecksumFile } from './checksums';

const HEX256 = 'a'.repeat(64);
const HEX512 = 'B'.repeat(128);

describe('parseChecksumFile', () => {
  it('reads a bare digest (dl.k8s.io, gVisor)', () => {
    expect(parseChecksumFile(`${HEX512}\n`, 'kubelet', 'sha512', 'x')).toBe(
      `sha512:${'b'.repeat(128)}`,
    );
  });

  it('reads sha256sum lines and picks the named file from a list', () => {
    const text = `${'1'.repeat(64)}  node-v24.1.0-linux-x64.tar.xz\n${HEX256} *node-v24.1.0-linux-arm64.tar.xz\n`;
    expect(parseChecksumFile(text, 'node-v24.1.0-linux-arm64.tar.xz', 'sha256', 'x')).toBe(
      `sha256:${HEX256}`,
    );
  });

  it('accepts a single entry naming a path', () => {
    expect(parseChecksumFile(`${HEX256}  bin/containerd.tar.gz`, 'other', 'sha256', 'x')).toBe(
      `sha256:${HEX256}`,
    );
  });

  it('rejects wrong lengths, missing files and empty files', () => {
    const cases = [
      () => parseChecksumFile('abc  f', 'f', 'sha256', 'x'),
      () => parseChecksumFile(`${HEX256}  a\n${HEX256}  b\n`, 'c', 'sha256', 'x'),
      () => parseChecksumFile('\n', 'f', 'sha256', 'x'),
      () => parseChecksumFile(`${HEX256}  f`, 'f', 'sha512', 'x'),
    ];
    for (const run of cases) {
      let caught: unknown;
      try {
        run();
      } catch (err) {
        caught = err;
      }
      expect(hasCode(caught, 'INVALID_ARGUMENT')).toBe(true);
    }
  });
});

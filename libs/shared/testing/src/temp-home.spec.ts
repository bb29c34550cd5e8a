import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTempHome, useTempHome } from './temp-home';

describe('makeTempHome', () => {
  it('puts HOME and every XDG directory in one fresh directory that cleanup removes', () => {
    const temp = makeTempHome('podmin test/home');
    try {
      expect(path.dirname(temp.home)).toBe(os.tmpdir());
      expect(path.basename(temp.home)).toMatch(/^podmin-test-home-/);
      expect(temp.env).toEqual({
        HOME: temp.home,
        XDG_CONFIG_HOME: path.join(temp.home, 'c'),
        XDG_DATA_HOME: path.join(temp.home, 'd'),
        XDG_CACHE_HOME: path.join(temp.home, 'k'),
        XDG_RUNTIME_DIR: path.join(temp.home, 'run'),
      });
      expect(fs.statSync(temp.env['XDG_RUNTIME_DIR']!).mode & 0o777).toBe(0o700);
    } finally {
      temp.cleanup();
    }
    expect(fs.existsSync(temp.home)).toBe(false);
    temp.cleanup();
  });
});

describe('useTempHome', () => {
  const temp = useTempHome('podmin-use-home');
  const seen: string[] = [];

  it('gives each test its own HOME', () => {
    seen.push(temp().home);
    expect(fs.existsSync(temp().home)).toBe(true);
  });

  it('and removes the previous one', () => {
    seen.push(temp().home);
    expect(seen[1]).not.toBe(seen[0]);
    expect(fs.existsSync(seen[0]!)).toBe(false);
  });
});

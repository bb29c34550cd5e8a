import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileTree } from './file-tree';
import { useTempDir } from './temp-dir';

describe('fileTree', () => {
  const dir = useTempDir('podmin file-tree');

  it('reads every file by its relative path and lists links without following them', () => {
    mkdirSync(path.join(dir(), 'a/real'), { recursive: true });
    writeFileSync(path.join(dir(), 'a/real/f.txt'), 'one');
    writeFileSync(path.join(dir(), 'top.txt'), 'two');
    symlinkSync('real', path.join(dir(), 'a/linked'));
    symlinkSync('../top.txt', path.join(dir(), 'a/top-link'));
    expect(fileTree(dir())).toEqual({
      'a/real/f.txt': 'one',
      'a/linked': '-> real',
      'a/top-link': '-> ../top.txt',
      'top.txt': 'two',
    });
  });

  it('walks only the subdirectories asked for, and a missing one adds nothing', () => {
    mkdirSync(path.join(dir(), 'x'));
    mkdirSync(path.join(dir(), 'y'));
    writeFileSync(path.join(dir(), 'x/1'), '1');
    writeFileSync(path.join(dir(), 'y/2'), '2');
    expect(fileTree(dir(), ['x', 'missing'])).toEqual({ 'x/1': '1' });
  });
});

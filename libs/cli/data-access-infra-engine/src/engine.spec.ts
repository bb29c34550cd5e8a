import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasCode } from '@podmin/util-errors';
import { backendArgs, findEngine, writeWorkDir } from './engine';

describe('findEngine', () => {
  let dir: string;
  const exe = (sub: string, name: string): string => {
    const file = path.join(dir, sub, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o755 });
    return file;
  };
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-engine-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prefers PODMIN_TF_CMD, then tofu, then terraform on PATH', () => {
    const terraform = exe('a', 'terraform');
    const tofu = exe('b', 'tofu');
    const custom = exe('c', 'my-tofu');
    const searchPath = [path.join(dir, 'a'), path.join(dir, 'b')].join(path.delimiter);
    expect(findEngine({ path: searchPath })).toBe(tofu);
    expect(findEngine({ path: path.join(dir, 'a') })).toBe(terraform);
    expect(findEngine({ path: searchPath, tfCmd: custom })).toBe(custom);
    expect(findEngine({ path: path.join(dir, 'c'), tfCmd: 'my-tofu' })).toBe(custom);
  });

  it('names the pair when nothing is found', () => {
    fs.writeFileSync(path.join(dir, 'tofu'), 'not executable', { mode: 0o644 });
    let caught: unknown;
    try {
      findEngine({ path: dir });
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'NOT_FOUND')).toBe(true);
    expect((caught as Error).message).toBe(
      'finding OpenTofu/Terraform: neither tofu nor terraform is on PATH',
    );
    expect(() => findEngine({ path: dir, tfCmd: path.join(dir, 'nope') })).toThrow(
      /OpenTofu\/Terraform: PODMIN_TF_CMD=.*nope is not an executable/,
    );
  });
});

describe('backendArgs', () => {
  it('configures the S3 backend with its lockfile, and path style for a custom endpoint', () => {
    const base = { bucket: 'b', key: 'tfstate/podmin.tfstate', region: 'us-west-2' };
    expect(backendArgs(base)).toEqual([
      '-backend-config=bucket=b',
      '-backend-config=key=tfstate/podmin.tfstate',
      '-backend-config=region=us-west-2',
      '-backend-config=use_lockfile=true',
    ]);
    expect(backendArgs({ ...base, endpoint: 'http://127.0.0.1:5000' }).slice(4)).toEqual([
      '-backend-config=use_path_style=true',
      '-backend-config=endpoints={s3="http://127.0.0.1:5000"}',
    ]);
  });
});

describe('writeWorkDir', () => {
  it('replaces module files and inputs but keeps initialized providers and their lock', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-workdir-'));
    try {
      fs.mkdirSync(path.join(dir, '.terraform/providers'), { recursive: true });
      fs.writeFileSync(path.join(dir, '.terraform/providers/p'), 'provider');
      fs.writeFileSync(path.join(dir, '.terraform.lock.hcl'), 'lock');
      fs.writeFileSync(path.join(dir, 'old.tf'), 'stale');
      fs.writeFileSync(path.join(dir, 'setup.tfplan'), 'plan');
      await writeWorkDir(dir, [{ name: 'main.tf', content: 'locals {}\n' }], '{"cluster":"c"}\n');
      expect(fs.readdirSync(dir).sort()).toEqual([
        '.terraform',
        '.terraform.lock.hcl',
        'main.tf',
        'podmin.auto.tfvars.json',
      ]);
      expect(fs.readFileSync(path.join(dir, '.terraform/providers/p'), 'utf8')).toBe('provider');
      expect(fs.readFileSync(path.join(dir, 'podmin.auto.tfvars.json'), 'utf8')).toBe(
        '{"cluster":"c"}\n',
      );
      expect(fs.statSync(path.join(dir, 'main.tf')).mode & 0o777).toBe(0o600);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

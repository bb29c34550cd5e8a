import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { embeddedAwsModule } from './aws-module';
import { isModuleFileName, readModuleDir } from './module-files';

describe('module files', () => {
  it('reads only *.tf and *.tftpl files, sorted', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-module-'));
    try {
      fs.writeFileSync(path.join(dir, 'variables.tf'), 'variable "x" {}\n');
      fs.writeFileSync(path.join(dir, 'main.tf'), 'locals {}\n');
      fs.writeFileSync(path.join(dir, 'nat64.sh.tftpl'), '#!/bin/sh\n');
      fs.writeFileSync(path.join(dir, 'README.md'), '# no\n');
      fs.writeFileSync(path.join(dir, 'terraform.tfstate'), '{}');
      expect(readModuleDir(dir).map((f) => f.name)).toEqual([
        'main.tf',
        'nat64.sh.tftpl',
        'variables.tf',
      ]);
      expect(readModuleDir(path.join(dir, 'absent'))).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects names with directories', () => {
    expect(isModuleFileName('../main.tf')).toBe(false);
    expect(isModuleFileName('main.tf')).toBe(true);
  });

  it('serves the checkout’s infra/aws files from source', () => {
    const dir = path.resolve(__dirname, '../../../../infra/aws');
    const expected = fs.existsSync(dir) ? fs.readdirSync(dir).filter(isModuleFileName).sort() : [];
    expect(embeddedAwsModule().map((f) => f.name)).toEqual(expected);
  });
});

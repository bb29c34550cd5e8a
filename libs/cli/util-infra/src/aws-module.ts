import path from 'node:path';
import { readModuleDir, type ModuleFile } from './module-files';

// tools/scripts/bundle.mjs replaces this file in the CLI bundle with one that returns the
// infra/aws files as string literals, so the bundled CLI carries the module with it. From
// source (tests, ts-node) the files are read from the checkout.

/** The AWS module (`infra/aws/*.tf`, `*.tftpl`) this CLI carries. */
export function embeddedAwsModule(): ModuleFile[] {
  return readModuleDir(path.resolve(__dirname, '../../../../infra/aws'));
}

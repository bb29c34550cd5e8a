import fs from 'node:fs';
import path from 'node:path';

/** One file of an OpenTofu/Terraform module. */
export interface ModuleFile {
  /** File name without directories, e.g. `main.tf`. */
  name: string;
  content: string;
}

/** Which files of a module directory belong to the module: `*.tf` and `*.tftpl`. */
export function isModuleFileName(name: string): boolean {
  return /^[A-Za-z0-9_.-]+\.(?:tf|tftpl)$/.test(name);
}

/** Reads the `*.tf` and `*.tftpl` files of a directory, sorted by name; [] when it is absent. */
export function readModuleDir(dir: string): ModuleFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter(isModuleFileName)
    .sort()
    .map((name) => ({ name, content: fs.readFileSync(path.join(dir, name), 'utf8') }));
}

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A temporary HOME with its own XDG directories, for CLI runs that must see only their own state. */
export interface TempHome {
  /** Absolute path of the new HOME. */
  home: string;
  /** HOME and the four XDG variables, all inside {@link home}. */
  env: Record<string, string>;
  /** Removes the HOME and everything in it; safe to call twice. */
  cleanup: () => void;
}

/**
 * Creates a HOME under `os.tmpdir()` whose name starts with `prefix`, with XDG_CONFIG_HOME,
 * XDG_DATA_HOME, XDG_CACHE_HOME and XDG_RUNTIME_DIR below it (`<home>/c`, `d`, `k`, `run`; the
 * runtime directory is created 0700, as the XDG spec asks of it).
 */
export function makeTempHome(prefix: string): TempHome {
  const home = mkdtempSync(path.join(os.tmpdir(), `${prefix.replace(/[^A-Za-z0-9._-]/g, '-')}-`));
  const runtime = path.join(home, 'run');
  mkdirSync(runtime, { mode: 0o700 });
  return {
    home,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'c'),
      XDG_DATA_HOME: path.join(home, 'd'),
      XDG_CACHE_HOME: path.join(home, 'k'),
      XDG_RUNTIME_DIR: runtime,
    },
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
}

/**
 * A fresh {@link TempHome} for every test of the enclosing `describe` (made in `beforeEach`,
 * removed in `afterEach`); read it inside tests through the returned getter.
 */
export function useTempHome(prefix: string): () => TempHome {
  let current: TempHome | undefined;
  beforeEach(() => {
    current = makeTempHome(prefix);
  });
  afterEach(() => {
    current?.cleanup();
    current = undefined;
  });
  return () => {
    if (current === undefined) throw new Error('useTempHome: read the HOME inside a test');
    return current;
  };
}

import os from 'node:os';
import path from 'node:path';

/** The four Podmin directory classes of the spec's table. */
export interface PodminDirs {
  config: string;
  cache: string;
  data: string;
  runtime: string;
}

/** Environment and platform inputs to directory resolution (injected for tests). */
export interface DirsInput {
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  home: string;
}

/**
 * Resolves Podmin's directories: on Linux the XDG defaults, on macOS and Windows `~/.podmin/*`;
 * an explicitly set (non-empty, absolute) XDG variable wins on every OS.
 */
export function resolveDirs(
  input: DirsInput = { env: process.env, platform: process.platform, home: os.homedir() },
): PodminDirs {
  const { env, platform, home } = input;
  const linux = platform === 'linux';
  const xdg = (name: string): string | undefined => {
    const value = env[name];
    return value && path.isAbsolute(value) ? value : undefined;
  };
  const pick = (variable: string, linuxDefault: string, otherDefault: string): string => {
    const explicit = xdg(variable);
    if (explicit) return path.join(explicit, 'podmin');
    return linux ? linuxDefault : otherDefault;
  };
  const runtimeXdg = xdg('XDG_RUNTIME_DIR');
  return {
    config: pick(
      'XDG_CONFIG_HOME',
      path.join(home, '.config', 'podmin'),
      path.join(home, '.podmin', 'config'),
    ),
    cache: pick(
      'XDG_CACHE_HOME',
      path.join(home, '.cache', 'podmin'),
      path.join(home, '.podmin', 'cache'),
    ),
    data: pick(
      'XDG_DATA_HOME',
      path.join(home, '.local', 'share', 'podmin'),
      path.join(home, '.podmin', 'data'),
    ),
    runtime: runtimeXdg ? path.join(runtimeXdg, 'podmin') : path.join(home, '.podmin', 'run'),
  };
}

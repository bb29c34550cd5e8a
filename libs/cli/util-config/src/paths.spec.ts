import { resolveDirs } from './paths';

describe('resolveDirs', () => {
  const home = '/home/ada';

  it('uses XDG defaults on Linux', () => {
    expect(resolveDirs({ env: {}, platform: 'linux', home })).toEqual({
      config: '/home/ada/.config/podmin',
      cache: '/home/ada/.cache/podmin',
      data: '/home/ada/.local/share/podmin',
      runtime: '/home/ada/.podmin/run',
    });
  });

  it('uses ~/.podmin on macOS and Windows', () => {
    for (const platform of ['darwin', 'win32'] as const) {
      expect(resolveDirs({ env: {}, platform, home })).toEqual({
        config: '/home/ada/.podmin/config',
        cache: '/home/ada/.podmin/cache',
        data: '/home/ada/.podmin/data',
        runtime: '/home/ada/.podmin/run',
      });
    }
  });

  it('lets explicit XDG variables win on every OS and ignores relative ones', () => {
    const env = {
      XDG_CONFIG_HOME: '/x/c',
      XDG_CACHE_HOME: '/x/k',
      XDG_DATA_HOME: 'relative',
      XDG_RUNTIME_DIR: '/run/user/1',
    };
    for (const platform of ['linux', 'darwin', 'win32'] as const) {
      const dirs = resolveDirs({ env, platform, home });
      expect(dirs.config).toBe('/x/c/podmin');
      expect(dirs.cache).toBe('/x/k/podmin');
      expect(dirs.runtime).toBe('/run/user/1/podmin');
      expect(dirs.data).toBe(
        platform === 'linux' ? '/home/ada/.local/share/podmin' : '/home/ada/.podmin/data',
      );
    }
  });
});

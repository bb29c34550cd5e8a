import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** An OpenTofu/Terraform executable for tests and the environment it needs. */
export interface TestInfraEngine {
  executable: string;
  /** Extra environment (the offline provider mirror's CLI config for the dev-cache engine). */
  env: Record<string, string>;
}

/**
 * The real engine tests use: the offline OpenTofu built by tools/infra-stack/build.sh under
 * `${PODMIN_DEV_CACHE:-~/.cache/podmin-dev}/infra-stack` (with its `tofurc`), else `tofu` or
 * `terraform` on PATH; undefined when there is none.
 */
export function findTestInfraEngine(
  env: Readonly<Record<string, string | undefined>> = process.env,
): TestInfraEngine | undefined {
  const devCache = env['PODMIN_DEV_CACHE'] ?? path.join(os.homedir(), '.cache', 'podmin-dev');
  const stack = path.join(devCache, 'infra-stack');
  const offline = path.join(stack, 'bin', 'tofu');
  if (fs.existsSync(offline)) {
    const rc = [path.join(stack, 'tofurc'), path.join(stack, 'bin', 'tofurc')].find((f) =>
      fs.existsSync(f),
    );
    return { executable: offline, env: rc === undefined ? {} : { TF_CLI_CONFIG_FILE: rc } };
  }
  for (const name of ['tofu', 'terraform']) {
    for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
      const candidate = path.join(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return { executable: candidate, env: {} };
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

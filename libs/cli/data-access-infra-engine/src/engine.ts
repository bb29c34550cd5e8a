import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PodminError } from '@podmin/util-errors';
import {
  TFVARS_FILE_NAME,
  parseEngineVersion,
  stateLockId,
  type ModuleFile,
} from '@podmin/cli-util-infra';

/** What {@link findEngine} reads from the environment. */
export interface EngineSearch {
  /** PODMIN_TF_CMD: the executable to use, as a path or a name on PATH. */
  tfCmd?: string;
  /** PATH. */
  path?: string;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Chooses the OpenTofu/Terraform executable: PODMIN_TF_CMD, else `tofu` on PATH, else
 * `terraform` on PATH. NOT_FOUND says how to install or point at one.
 */
export function findEngine(search: EngineSearch): string {
  const hint =
    'install OpenTofu (or Terraform) 1.11 or newer, or set PODMIN_TF_CMD to its executable';
  if (search.tfCmd !== undefined && search.tfCmd !== '') {
    const found = search.tfCmd.includes('/')
      ? isExecutable(search.tfCmd)
        ? search.tfCmd
        : undefined
      : onPath(search.tfCmd, search.path);
    if (found === undefined) {
      throw new PodminError(
        'NOT_FOUND',
        `finding OpenTofu/Terraform: PODMIN_TF_CMD=${search.tfCmd} is not an executable`,
        { hint },
      );
    }
    return found;
  }
  const found = onPath('tofu', search.path) ?? onPath('terraform', search.path);
  if (found === undefined) {
    throw new PodminError(
      'NOT_FOUND',
      'finding OpenTofu/Terraform: neither tofu nor terraform is on PATH',
      { hint },
    );
  }
  return found;
}

/** The S3 backend of the cluster's state. */
export interface BackendConfig {
  bucket: string;
  key: string;
  region: string;
  /** A custom S3 endpoint (AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL); turns on path-style. */
  endpoint?: string;
}

/** The `-backend-config` arguments of `init` for the S3 backend with its lockfile. */
export function backendArgs(backend: BackendConfig): string[] {
  const args = [
    `-backend-config=bucket=${backend.bucket}`,
    `-backend-config=key=${backend.key}`,
    `-backend-config=region=${backend.region}`,
    '-backend-config=use_lockfile=true',
  ];
  if (backend.endpoint !== undefined) {
    args.push(
      '-backend-config=use_path_style=true',
      `-backend-config=endpoints={s3=${JSON.stringify(backend.endpoint)}}`,
    );
  }
  return args;
}

/** The engine could not take the state lock; `lockId` is what `force-unlock` needs. */
export class StateLockedError extends PodminError {
  constructor(
    readonly lockId: string,
    readonly executable: string,
    readonly workDir: string,
    command: string,
  ) {
    super(
      'PRECONDITION_FAILED',
      `running OpenTofu/Terraform ${command}: the state is locked (lock ID ${lockId})`,
      {
        hint: `if no other podmin run holds it, release it with: ${executable} -chdir=${workDir} force-unlock ${lockId}`,
      },
    );
  }
}

/** Options of an {@link InfraEngine}. */
export interface InfraEngineOptions {
  executable: string;
  workDir: string;
  /** The environment of every engine run (credentials, region, TF_PLUGIN_CACHE_DIR…). */
  env: Readonly<Record<string, string | undefined>>;
  /** Receives the engine's stdout and stderr as they come (the CLI sends them to stderr). */
  output: (chunk: string) => void;
}

/** Runs one OpenTofu/Terraform executable in one work directory. */
export class InfraEngine {
  constructor(private readonly options: InfraEngineOptions) {}

  get executable(): string {
    return this.options.executable;
  }

  get workDir(): string {
    return this.options.workDir;
  }

  /** The engine's version; INVALID_ARGUMENT when it is older than 1.11 or says nothing. */
  async version(): Promise<string> {
    // Runs before the work directory exists (nothing is written until the checks pass).
    const { stdout } = await this.run(['-version', '-json'], { quiet: true, inWorkDir: false });
    return parseEngineVersion(stdout, this.options.executable);
  }

  /** `init` with the S3 backend (reconfigured every run: the state never migrates). */
  async init(backend: BackendConfig): Promise<void> {
    await this.run(['init', '-input=false', '-no-color', '-reconfigure', ...backendArgs(backend)]);
  }

  /** `plan -out`; true when the plan has changes. `destroy` plans the removal of everything. */
  async plan(planFile: string, options: { destroy?: boolean } = {}): Promise<boolean> {
    const { code } = await this.run(
      [
        'plan',
        '-input=false',
        '-no-color',
        '-detailed-exitcode',
        ...(options.destroy === true ? ['-destroy'] : []),
        `-out=${planFile}`,
      ],
      { okCodes: [0, 2] },
    );
    return code === 2;
  }

  /** Applies a saved plan. */
  async apply(planFile: string): Promise<void> {
    await this.run(['apply', '-input=false', '-no-color', '-auto-approve', planFile]);
  }

  /** Releases a stale state lock. */
  async forceUnlock(lockId: string): Promise<void> {
    await this.run(['force-unlock', '-force', '-no-color', lockId]);
  }

  private run(
    args: string[],
    options: { quiet?: boolean; okCodes?: number[]; inWorkDir?: boolean } = {},
  ): Promise<{ code: number; stdout: string }> {
    const { executable, workDir, env, output } = this.options;
    const command = args[0] ?? '';
    return new Promise((resolve, reject) => {
      const child = spawn(executable, args, {
        cwd: options.inWorkDir === false ? os.tmpdir() : workDir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let combined = '';
      const take = (isStdout: boolean) => (data: Buffer) => {
        const text = data.toString('utf8');
        if (isStdout) stdout += text;
        combined += text;
        if (options.quiet !== true) output(text);
      };
      child.stdout.on('data', take(true));
      child.stderr.on('data', take(false));
      child.on('error', (err) =>
        reject(
          new PodminError(
            'NOT_FOUND',
            `running OpenTofu/Terraform (${executable}): ${err.message}`,
            { cause: err, hint: 'set PODMIN_TF_CMD to an OpenTofu or Terraform 1.11+ executable' },
          ),
        ),
      );
      child.on('close', (code, signal) => {
        const exit = code ?? -1;
        if ((options.okCodes ?? [0]).includes(exit)) {
          resolve({ code: exit, stdout });
          return;
        }
        const lockId = stateLockId(combined);
        if (lockId !== undefined) {
          reject(new StateLockedError(lockId, executable, workDir, command));
          return;
        }
        const last = combined.trim().split('\n').slice(-3).join(' ').trim();
        reject(
          new PodminError(
            'INTERNAL',
            `running OpenTofu/Terraform ${command}: it ${signal === null ? `exited with ${exit}` : `was stopped by ${signal}`}${last === '' ? '' : ` (${last})`}`,
            {
              fault: 'user',
              hint: `its output is above; the generated files stay in ${workDir} for inspection`,
            },
          ),
        );
      });
    });
  }
}

/** Entries of a work directory that survive a rewrite: initialized providers and their lock. */
export const KEPT_WORK_DIR_ENTRIES = ['.terraform', '.terraform.lock.hcl'] as const;

/**
 * Replaces the generated module and `podmin.auto.tfvars.json` in `workDir` (created 0700),
 * keeping `.terraform/` and `.terraform.lock.hcl` so providers are not initialized again.
 */
export async function writeWorkDir(
  workDir: string,
  files: readonly ModuleFile[],
  tfvars: string,
): Promise<void> {
  await fsp.mkdir(workDir, { recursive: true, mode: 0o700 });
  for (const entry of await fsp.readdir(workDir)) {
    if ((KEPT_WORK_DIR_ENTRIES as readonly string[]).includes(entry)) continue;
    await fsp.rm(path.join(workDir, entry), { recursive: true, force: true });
  }
  for (const file of files) {
    await fsp.writeFile(path.join(workDir, file.name), file.content, { mode: 0o600 });
  }
  await fsp.writeFile(path.join(workDir, TFVARS_FILE_NAME), tfvars, { mode: 0o600 });
}

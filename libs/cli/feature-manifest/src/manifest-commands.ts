import fs from 'node:fs/promises';
import { PodminError, ValidationError } from '@podmin/util-errors';
import {
  buildDeployment,
  parseImageFlags,
  parsePortFlags,
  parseQuantity,
  renderBuiltInManifest,
  type BuiltInOptions,
  type Deployment,
} from '@podmin/util-manifest';
import type { Reporter } from '@podmin/cli-util-io';
import { readManifestFile } from './manifest-file';

/** Flags shared by `init` and the built-in manifest of `deploy`. */
export interface BuiltInFlags {
  name: string;
  nodegroup: string;
  namespace?: string;
  images: string[];
  service?: boolean;
  ports?: string[];
  cpu?: string;
  memory?: string;
}

/** Turns built-in manifest flags into renderer options, validating each flag. */
export function builtInOptions(flags: BuiltInFlags): BuiltInOptions {
  const options: BuiltInOptions = {
    name: flags.name,
    nodegroup: flags.nodegroup,
    images: parseImageFlags(flags.images),
  };
  if (flags.namespace !== undefined) options.namespace = flags.namespace;
  if (flags.service) options.service = true;
  if (flags.ports && flags.ports.length > 0) options.ports = parsePortFlags(flags.ports);
  if (flags.cpu !== undefined) options.cpu = parseQuantity('--cpu', flags.cpu);
  if (flags.memory !== undefined) options.memory = parseQuantity('--memory', flags.memory);
  return options;
}

/** Renders the built-in manifest and checks it passes the same validation as a file would. */
export function renderBuiltIn(flags: BuiltInFlags): { text: string; deployment: Deployment } {
  const text = renderBuiltInManifest(builtInOptions(flags));
  const deployment = buildDeployment(text, {
    source: 'built-in manifest',
    name: flags.name,
    nodegroup: flags.nodegroup,
  });
  return { text, deployment };
}

/** `podmin init`: writes a minimal valid DaemonSet (and Service) to a new file, never overwriting. */
export async function initManifest(
  flags: BuiltInFlags & { file: string },
  reporter: Reporter,
): Promise<Deployment> {
  if (flags.images.length === 0) {
    throw new ValidationError(
      'init',
      [
        {
          field: '--image',
          message: 'at least one image is required (IMAGE, or NAME=IMAGE repeated)',
        },
      ],
      {
        code: 'INVALID_ARGUMENT',
      },
    );
  }
  const { text, deployment } = renderBuiltIn(flags);
  try {
    await fs.writeFile(flags.file, text, { flag: 'wx', mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new PodminError(
        'ALREADY_EXISTS',
        `writing ${flags.file}: the file already exists and init never overwrites`,
        {
          hint: 'choose another file with --file, or remove the existing one',
        },
      );
    }
    throw new PodminError('IO_ERROR', `writing ${flags.file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  reporter.info(
    `Wrote ${flags.file}: DaemonSet ${deployment.namespace}/${deployment.name} for NodeGroup ${deployment.nodegroup}${deployment.service ? `, Service ${deployment.service.name}` : ''}`,
  );
  return deployment;
}

/** Inputs of `podmin validate`. */
export interface ValidateFlags {
  file: string;
  images: string[];
  service?: boolean;
}

/** `podmin validate`: structural validation of a manifest file, writing nothing. */
export async function validateManifest(flags: ValidateFlags): Promise<Deployment> {
  const text = await readManifestFile(flags.file);
  return buildDeployment(text, {
    source: flags.file,
    images: parseImageFlags(flags.images),
    ...(flags.service ? { requireService: true } : {}),
  });
}

/** One-line description of a validated deployment. */
export function describeDeployment(d: Deployment): string {
  const svc = d.service
    ? `, Service ${d.service.name} (${servicePorts(d.service.object)})`
    : ', no Service';
  return `DaemonSet ${d.namespace}/${d.name} for NodeGroup ${d.nodegroup}${svc}`;
}

function servicePorts(service: Record<string, unknown>): string {
  const spec = service['spec'] as
    { ports?: Array<{ port: number; targetPort?: number; protocol?: string }> } | undefined;
  return (spec?.ports ?? [])
    .map((p) => `${p.port}→${p.targetPort ?? p.port}/${p.protocol ?? 'TCP'}`)
    .join(', ');
}

/** Inputs of `podmin deploy` that shape the manifest. */
export interface DeployFlags extends BuiltInFlags {
  file?: string;
}

/**
 * Produces the deployment `podmin deploy` commits: the built-in manifest, or `--file` with
 * `--image` overrides (`--port`, `--cpu`, `--memory`, `--namespace` are rejected with it).
 */
export async function prepareDeployment(flags: DeployFlags): Promise<Deployment> {
  if (flags.file === undefined) {
    if (flags.images.length === 0) {
      throw new ValidationError(
        'deploy',
        [
          {
            field: '--image',
            message:
              'is required with the built-in manifest (IMAGE, or NAME=IMAGE repeated); or pass --file',
          },
        ],
        {
          code: 'INVALID_ARGUMENT',
        },
      );
    }
    return renderBuiltIn(flags).deployment;
  }
  const rejected: Array<[string, unknown]> = [
    ['--port', flags.ports && flags.ports.length > 0 ? flags.ports : undefined],
    ['--cpu', flags.cpu],
    ['--memory', flags.memory],
    ['--namespace', flags.namespace],
  ];
  const problems = rejected
    .filter(([, value]) => value !== undefined)
    .map(([field]) => ({
      field,
      message: 'applies only to the built-in manifest; with --file, edit the manifest instead',
    }));
  if (problems.length > 0)
    throw new ValidationError('deploy', problems, { code: 'INVALID_ARGUMENT' });
  const text = await readManifestFile(flags.file);
  return buildDeployment(text, {
    source: flags.file,
    name: flags.name,
    nodegroup: flags.nodegroup,
    images: parseImageFlags(flags.images),
    ...(flags.service ? { requireService: true } : {}),
  });
}

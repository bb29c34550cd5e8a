import { PodminError, ValidationError, hasCode } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';
import {
  AWS_PARAMETER_STORE_ANNOTATION,
  AWS_SECRETS_MANAGER_ANNOTATION,
  parsePodPayload,
  type Deployment,
} from '@podmin/util-manifest';
import {
  MAX_MANIFEST_BYTES,
  blobPath,
  findByDigest,
  isIndexMediaType,
  parseImageIndex,
  parseReference,
  repositoryPrefix,
  type Descriptor,
  type ImageIndex,
} from '@podmin/util-oci';
import {
  entriesOf,
  readIndex,
  readPayloads,
  type PayloadCache,
} from '@podmin/data-access-desired-state';
import { deploymentKey } from '@podmin/util-desired-state';
import type { DesiredStateStore } from './desired-state.ports';
import { ImageIndexReads, publishFix, shorthandOf, taggedDescriptor } from './pin';

/** A secrets provider a Pod annotation names. */
export type PreflightSecretProvider = 'aws-parameter-store' | 'aws-secrets-manager';

/** Where the NodeGroup's architectures come from: the host (local) or the bucket's infrastructure inputs. */
export type ArchitectureSource = { kind: 'host'; arch: string } | { kind: 'bucket' };

/** What the preflight reads: the bucket, secret existence (never a value), and the architectures. */
export interface PreflightDeps {
  /** The cluster's bucket, read only. */
  bucket: Pick<DesiredStateStore, 'get'>;
  /** Cluster id, the first component of every secret name. */
  cluster: string;
  /** Whether a live secret has this name, from metadata only. */
  secretExists(provider: PreflightSecretProvider, name: string): Promise<boolean>;
  /** Where the NodeGroup's VM architectures come from. */
  architectures: ArchitectureSource;
  /** Verified payloads kept between commands (the CLI's payload cache). */
  payloadCache?: PayloadCache;
}

/**
 * Loads, without sending a request, what the checks of `deployment` use: the secret store of
 * each provider its annotations name and, for a bucket's infrastructure inputs, their parser.
 * `deploy` runs it before its first request, so loading never holds back a round of requests.
 */
export async function preparePreflight(
  deps: Pick<PreflightDeps, 'architectures'> & {
    openSecretStore?: (provider: PreflightSecretProvider) => Promise<unknown>;
  },
  deployment: Deployment,
): Promise<void> {
  const metadata = deployment.pod['metadata'] as { annotations?: Record<string, string> };
  const providers = SECRET_ANNOTATIONS.filter(([a]) => metadata.annotations?.[a] !== undefined);
  await Promise.all([
    ...providers.map(([, provider]) => deps.openSecretStore?.(provider)),
    deps.architectures.kind === 'bucket' ? import('@podmin/cli-util-infra') : undefined,
  ]);
}

/** What the preflight found: refusals (nothing may be committed) and warnings. */
export interface PreflightReport {
  problems: FieldProblem[];
  warnings: string[];
}

const SECRET_ANNOTATIONS: ReadonlyArray<[string, PreflightSecretProvider]> = [
  [AWS_PARAMETER_STORE_ANNOTATION, 'aws-parameter-store'],
  [AWS_SECRETS_MANAGER_ANNOTATION, 'aws-secrets-manager'],
];

interface ImageUse {
  field: string;
  image: string;
}

/**
 * Checks, before anything is committed, what the nodes will need (DESIGN §6.17): every image
 * reference resolves to a published manifest (tag or digest) in the bucket, with a platform for
 * every architecture of the NodeGroup's VMs; every secret the Pod's annotations name exists
 * (its value is never read); and it warns when the Service selects no Pod anywhere in the
 * desired state. Every check starts at once, so the bucket sees at most two dependent rounds of
 * parallel requests (a repository's `index.json`, then the tagged image index it names). Reads
 * only; refusals name the reference or key and the command that fixes it.
 */
export async function preflight(
  deps: PreflightDeps,
  deployment: Deployment,
  reads: ImageIndexReads = new ImageIndexReads(deps.bucket),
): Promise<PreflightReport> {
  const problems: FieldProblem[] = [];
  const warnings: string[] = [];
  // The bucket reads leave first; the checks that may load libraries (the infrastructure
  // inputs' parser, the secret store's clients; `preparePreflight` loads them beforehand) start
  // on the next turn, so loading never holds back the first round of requests.
  const images = dedupe(imageUses(deployment.pod));
  // One read per distinct repository, shared with the digest pinning (see ImageIndexReads).
  const indexes = new Map(images.map((use) => [use.image, reads.get(use.image)]));
  const serviceCheck = checkServiceSelects(deps, deployment, warnings);
  serviceCheck.catch(() => undefined);
  await new Promise<void>((resolve) => setImmediate(resolve));
  const architectures = nodegroupArchitectures(deps, deployment.nodegroup, warnings);
  await Promise.all([
    ...images.map((use) =>
      checkImage(
        deps,
        use,
        indexes.get(use.image) as Promise<ImageIndex | undefined>,
        architectures,
        problems,
      ),
    ),
    ...secretChecks(deps, deployment, problems),
    serviceCheck,
  ]);
  problems.sort((a, b) => a.field.localeCompare(b.field));
  return { problems, warnings };
}

/**
 * Runs {@link preflight} and throws a ValidationError (INVALID_MANIFEST) naming every problem,
 * with nothing written; returns the warnings otherwise.
 */
export async function assertPreflight(
  deps: PreflightDeps,
  deployment: Deployment,
  reads?: ImageIndexReads,
): Promise<string[]> {
  const { problems, warnings } = await preflight(deps, deployment, reads);
  if (problems.length > 0) {
    throw new ValidationError(
      `preflight of ${deploymentKey(deployment.nodegroup, deployment.name)}: the nodes could not run it; nothing was written`,
      problems,
      { hint: 'fix each problem with the command it names, or skip the check with --no-preflight' },
    );
  }
  return warnings;
}

/** Every regular and init container's image, with its field path in the DaemonSet. */
function imageUses(pod: Record<string, unknown>): ImageUse[] {
  const spec = pod['spec'] as Record<string, unknown> | undefined;
  const uses: ImageUse[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    const containers = spec?.[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((container: unknown, index) => {
      const image = (container as { image?: unknown }).image;
      if (typeof image === 'string') {
        uses.push({ field: `spec.template.spec.${list}[${index}].image`, image });
      }
    });
  }
  return uses;
}

/** One check per distinct image; its problem names the first field using it. */
function dedupe(uses: ImageUse[]): ImageUse[] {
  const seen = new Set<string>();
  return uses.filter((use) => !seen.has(use.image) && seen.add(use.image) !== undefined);
}

/** The architectures of the NodeGroup's VMs, or undefined (with a warning) when unknown. */
async function nodegroupArchitectures(
  deps: PreflightDeps,
  nodegroup: string,
  warnings: string[],
): Promise<{ arches: string[]; from: string } | undefined> {
  if (deps.architectures.kind === 'host') {
    return { arches: [deps.architectures.arch], from: "this machine, the local provider's node" };
  }
  // Loaded here, not at the top: the infrastructure library is large and a local deploy never
  // needs it (bench/deploy-preflight.mjs).
  const { MAX_TFVARS_BYTES, TFVARS_OBJECT_KEY, parseModuleVars } =
    await import('@podmin/cli-util-infra');
  let text: string;
  try {
    text = (await deps.bucket.get(TFVARS_OBJECT_KEY, { maxBytes: MAX_TFVARS_BYTES })).body.toString(
      'utf8',
    );
  } catch (err) {
    if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
    warnings.push(
      `Preflight: image architectures not checked: the bucket has no ${TFVARS_OBJECT_KEY} (run \`podmin setup\` to create NodeGroup ${nodegroup})`,
    );
    return undefined;
  }
  const vars = parseModuleVars(text, TFVARS_OBJECT_KEY, deps.cluster);
  const group = vars.nodegroups[nodegroup];
  if (group === undefined) {
    warnings.push(
      `Preflight: image architectures not checked: NodeGroup ${nodegroup} is not in ${TFVARS_OBJECT_KEY} (known: ${Object.keys(vars.nodegroups).sort().join(', ') || 'none'}); add it with \`podmin setup --nodegroup ${nodegroup}\``,
    );
    return undefined;
  }
  return {
    arches: [group.arch],
    from: `the ${group.instance_type} VMs of NodeGroup ${nodegroup} (${TFVARS_OBJECT_KEY})`,
  };
}

async function checkImage(
  deps: PreflightDeps,
  use: ImageUse,
  indexPromise: Promise<ImageIndex | undefined>,
  architecturesPromise: Promise<{ arches: string[]; from: string } | undefined>,
  problems: FieldProblem[],
): Promise<void> {
  const ref = parseReference(use.image);
  const prefix = repositoryPrefix(ref.repository);
  const field = use.field;
  const add = (message: string): void => {
    problems.push({ field, message: `${use.image} ${message}` });
  };

  const indexKey = `${prefix}index.json`;
  const [index, architectures] = await Promise.all([indexPromise, architecturesPromise]);
  let top: Descriptor | undefined;
  if (index !== undefined && ref.digest !== undefined) {
    // kubelet pulls by digest and ignores a tag beside it, and so does this check.
    top = findByDigest(index, ref.digest);
    if (top === undefined) {
      add(`is not published: ${indexKey} has no manifest ${ref.digest}; ${publishFix(use.image)}`);
      return;
    }
  } else {
    const found = taggedDescriptor(use.image, index);
    if ('problem' in found) {
      problems.push({ field, message: found.problem });
      return;
    }
    top = found.descriptor;
  }
  if (architectures === undefined) return;
  const platforms = await platformsOf(deps, prefix, top);
  if (platforms === undefined) return;
  const missing = architectures.arches.filter((arch) => !platforms.includes(arch));
  if (missing.length === 0) return;
  const wanted = [...new Set([...platforms, ...missing])].sort().map((a) => `linux/${a}`);
  const tagged = shorthandOf(ref.repository, `:${ref.tag ?? '<tag>'}`);
  add(
    `has no linux/${missing.join(', linux/')} image (it has ${platforms.map((a) => `linux/${a}`).join(', ') || 'none'}) for ${architectures.from}; build and push it for every architecture: \`podmin build -t ${tagged} --platform ${wanted.join(',')} <dir>\` then \`podmin push ${tagged}\``,
  );
}

/**
 * The linux architectures an image offers: a single manifest's own platform (from its
 * descriptor), or the platforms listed in its image index, read from the bucket.
 */
async function platformsOf(
  deps: PreflightDeps,
  prefix: string,
  top: Descriptor,
): Promise<string[] | undefined> {
  if (!isIndexMediaType(top.mediaType)) {
    return top.platform === undefined ? undefined : [top.platform.architecture];
  }
  const key = `${prefix}${blobPath(top.digest)}`;
  let nested: ImageIndex;
  try {
    nested = parseImageIndex(
      (await deps.bucket.get(key, { maxBytes: MAX_MANIFEST_BYTES })).body,
      key,
    );
  } catch (err) {
    if (!hasCode(err, 'OBJECT_NOT_FOUND')) throw err;
    throw new PodminError(
      'NOT_FOUND',
      `preflight: ${key} is listed in its repository's index.json but missing from the bucket`,
      { hint: 'push the image again to repair it' },
    );
  }
  return [
    ...new Set(
      nested.manifests
        .filter((d) => d.platform !== undefined && d.platform.os === 'linux')
        .map((d) => d.platform?.architecture ?? ''),
    ),
  ].sort();
}

function secretChecks(
  deps: PreflightDeps,
  deployment: Deployment,
  problems: FieldProblem[],
): Array<Promise<void>> {
  const metadata = deployment.pod['metadata'] as { annotations?: Record<string, string> };
  const annotations = metadata.annotations ?? {};
  const checks: Array<Promise<void>> = [];
  for (const [annotation, provider] of SECRET_ANNOTATIONS) {
    const value = annotations[annotation];
    if (value === undefined) continue;
    const field = `spec.template.metadata.annotations[${JSON.stringify(annotation)}]`;
    for (const key of value.split(',')) {
      const name = `/${deps.cluster}/${deployment.namespace}/${deployment.name}/${key}`;
      const create = `\`podmin secret create ${key} --for ${deployment.name} -n ${deployment.namespace} --provider ${provider} --from-file FILE\``;
      checks.push(
        deps.secretExists(provider, name).then(
          (exists) => {
            if (!exists) {
              problems.push({
                field,
                message: `key ${key}: secret ${name} does not exist in ${provider}; create it: ${create}`,
              });
            }
          },
          (err: unknown) => {
            if (!hasCode(err, 'PRECONDITION_FAILED')) throw err;
            problems.push({
              field,
              message: `key ${key}: secret ${name} is scheduled for deletion in ${provider}; restore it: \`podmin secret restore ${key} --for ${deployment.name} -n ${deployment.namespace} --provider ${provider}\``,
            });
          },
        ),
      );
    }
  }
  return checks;
}

function selects(
  selector: Record<string, string>,
  labels: Record<string, string> | undefined,
): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

/**
 * DESIGN §6.11: a Service selecting no Pod anywhere in the desired state is a warning, not an
 * error. Its own Pod usually matches, and then nothing is read.
 */
async function checkServiceSelects(
  deps: PreflightDeps,
  deployment: Deployment,
  warnings: string[],
): Promise<void> {
  const service = deployment.service;
  if (service === undefined) return;
  const selector = (service.object['spec'] as { selector: Record<string, string> }).selector;
  const ownLabels = (deployment.pod['metadata'] as { labels?: Record<string, string> }).labels;
  if (selects(selector, ownLabels)) return;
  const own = deploymentKey(deployment.nodegroup, deployment.name);
  const index = entriesOf(await readIndex(deps.bucket));
  const keys = Object.entries(index)
    .filter(([key]) => key !== own)
    .map(([, entry]) => entry.pod);
  const reads = await readPayloads(deps.bucket, keys, {
    ...(deps.payloadCache === undefined ? {} : { cache: deps.payloadCache }),
  });
  for (const [key, read] of reads) {
    if (!read.ok) continue;
    try {
      const pod = parsePodPayload(read.body.toString('utf8'), key);
      const labels = (pod.pod['metadata'] as { labels?: Record<string, string> }).labels;
      if (pod.namespace === service.namespace && selects(selector, labels)) return;
    } catch {
      // A payload that does not parse selects nothing; list and status report it.
    }
  }
  warnings.push(
    `Preflight: Service ${service.namespace}/${service.name} selects no Pod anywhere in the desired state (no Pod in namespace ${service.namespace} carries ${Object.entries(
      selector,
    )
      .map(([k, v]) => `${k}: "${v}"`)
      .join(', ')}); it has no backends until a deployment's Pod does`,
  );
}

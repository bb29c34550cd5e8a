import { isDigest } from './digest';
import { OciFormatError } from './errors';

/** Host of the cluster's loopback-only registry, as Pod images name it. */
export const CLUSTER_REGISTRY = 'registry.podmin.internal';
/** Namespace of application images in the cluster registry and bucket. */
export const APPS_NAMESPACE = 'apps';
/** Namespace reserved for setup-managed dependency images (`mirror/<registry>/<repository>`). */
export const MIRROR_NAMESPACE = 'mirror';
/** Registry host that references without one resolve to (Docker Hub). */
export const DOCKER_HUB_REGISTRY = 'docker.io';
/** Longest repository name (the distribution spec's limit on `name`, host included). */
export const MAX_NAME_LENGTH = 255;

/** An image reference split into its parts, exactly as written (no defaults applied). */
export interface ImageReference {
  /** Registry host with optional port; undefined when the reference names none. */
  registry: string | undefined;
  /** Repository path beneath the registry, e.g. `library/nginx` or `apps/hello`. */
  repository: string;
  /** Tag, when given. */
  tag: string | undefined;
  /** Digest, when given. */
  digest: string | undefined;
}

/** A reference with a registry; from {@link parseSourceReference} or a cluster resolution. */
export interface QualifiedReference extends ImageReference {
  /** Registry host with optional port. */
  registry: string;
}

// Distribution reference grammar (distribution/reference, regexp.go).
const ALPHANUMERIC = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]+)';
const PATH_COMPONENT = `${ALPHANUMERIC}(?:${SEPARATOR}${ALPHANUMERIC})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const IPV6 = '\\[(?:[a-fA-F0-9:]+)\\]';
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|${IPV6})`;
const DOMAIN = `${HOST}(?::[0-9]+)?`;
const PATH_COMPONENT_RE = new RegExp(`^${PATH_COMPONENT}$`);
const REPOSITORY_RE = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const DOMAIN_RE = new RegExp(`^${DOMAIN}$`);
const TAG_RE = /^[\w][\w.-]{0,127}$/;

/** True when `value` is a valid tag: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`. */
export function isValidTag(value: string): boolean {
  return TAG_RE.test(value);
}

/** True when `value` is a repository path (`component(/component)*`) of the distribution grammar. */
export function isValidRepositoryPath(value: string): boolean {
  return value.length <= MAX_NAME_LENGTH && REPOSITORY_RE.test(value);
}

/** True when `value` is one lowercase path component of the distribution grammar. */
export function isValidPathComponent(value: string): boolean {
  return PATH_COMPONENT_RE.test(value);
}

/**
 * Parses `[host[:port]/]path[:tag][@digest]` with the distribution grammar. As Docker does, the
 * first component is a registry host only when more components follow and it contains `.` or
 * `:`, is `localhost`, or has uppercase letters. No defaults are applied.
 */
export function parseReference(value: string): ImageReference {
  const fail = (why: string): never => {
    throw new OciFormatError(
      `parsing image reference ${JSON.stringify(value.slice(0, 300))}: ${why}`,
    );
  };
  if (value === '') {
    fail('must not be empty');
  }
  let rest = value;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!isDigest(digest)) {
      fail('the digest after "@" must be sha256:<64 hex> or sha512:<128 hex>');
    }
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!isValidTag(tag)) {
      fail('the tag must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}');
    }
  }
  let registry: string | undefined;
  const slash = rest.indexOf('/');
  if (slash !== -1) {
    const first = rest.slice(0, slash);
    if (
      first.includes('.') ||
      first.includes(':') ||
      first === 'localhost' ||
      first !== first.toLowerCase()
    ) {
      registry = first;
      rest = rest.slice(slash + 1);
      if (!DOMAIN_RE.test(registry)) {
        fail(`${JSON.stringify(registry)} is not a valid registry host[:port]`);
      }
    }
  }
  if (!REPOSITORY_RE.test(rest)) {
    fail(
      'the repository must be lowercase components matching [a-z0-9]+([._-][a-z0-9]+)* separated by "/"',
    );
  }
  if ((registry === undefined ? 0 : registry.length + 1) + rest.length > MAX_NAME_LENGTH) {
    fail(`the name is longer than ${MAX_NAME_LENGTH} characters`);
  }
  return { registry, repository: rest, tag, digest };
}

/** Formats a reference as `[registry/]repository[:tag][@digest]`. */
export function formatReference(ref: ImageReference): string {
  return (
    (ref.registry === undefined ? '' : `${ref.registry}/`) +
    ref.repository +
    (ref.tag === undefined ? '' : `:${ref.tag}`) +
    (ref.digest === undefined ? '' : `@${ref.digest}`)
  );
}

/**
 * Parses a reference to an external source image with Docker's defaults: no registry means
 * `docker.io`, a one-component Docker Hub repository gains `library/`, `index.docker.io`
 * becomes `docker.io`, and no tag and no digest means `:latest`. `nginx` becomes
 * `docker.io/library/nginx:latest`.
 */
export function parseSourceReference(value: string): QualifiedReference {
  const ref = parseReference(value);
  let registry = ref.registry ?? DOCKER_HUB_REGISTRY;
  if (registry === 'index.docker.io' || registry === 'registry-1.docker.io') {
    registry = DOCKER_HUB_REGISTRY;
  }
  const repository =
    registry === DOCKER_HUB_REGISTRY && !ref.repository.includes('/')
      ? `library/${ref.repository}`
      : ref.repository;
  const tag = ref.tag === undefined && ref.digest === undefined ? 'latest' : ref.tag;
  return { registry, repository, tag, digest: ref.digest };
}

/**
 * Resolves an image reference as Pods use it in the cluster: shorthand without a registry
 * (`hello`, `hello:v1`, `acme/web:v1`) resolves beneath `registry.podmin.internal/apps/`;
 * an explicit `registry.podmin.internal/...` reference must name `apps/` or `mirror/`.
 * Any other registry is an error whose hint says to `podmin push` the image first.
 */
export function parseClusterReference(value: string): QualifiedReference {
  const ref = parseReference(value);
  if (ref.registry === undefined) {
    return checkedCluster(value, {
      ...ref,
      registry: CLUSTER_REGISTRY,
      repository: `${APPS_NAMESPACE}/${ref.repository}`,
    });
  }
  if (ref.registry !== CLUSTER_REGISTRY) {
    throw new OciFormatError(
      `resolving cluster image ${JSON.stringify(value)}: registry ${ref.registry} is not the cluster registry ${CLUSTER_REGISTRY}`,
      { hint: `run \`podmin push ${value}\` and use the cluster reference it prints` },
    );
  }
  return checkedCluster(value, { ...ref, registry: CLUSTER_REGISTRY });
}

/** The tag a reference with neither tag nor digest means, as in Docker. */
export const DEFAULT_TAG = 'latest';

/**
 * The one resolution rule for the image references Pods use (DESIGN §6.16), shared by `push`
 * destinations, `--image`, manifest `image` fields and what `push` prints: a shorthand without
 * a registry host resolves beneath `registry.podmin.internal/apps/` (an explicit cluster
 * reference must name `apps/` or `mirror/`), and a reference with neither tag nor digest means
 * `:latest`, written out. `hello` → `registry.podmin.internal/apps/hello:latest`, `hello:v1`
 * → `registry.podmin.internal/apps/hello:v1`, `acme/web@sha256:…` keeps its digest alone.
 */
export function resolveClusterImageReference(value: string): QualifiedReference {
  const ref = parseClusterReference(value);
  return ref.tag === undefined && ref.digest === undefined ? { ...ref, tag: DEFAULT_TAG } : ref;
}

function checkedCluster(value: string, ref: QualifiedReference): QualifiedReference {
  const problem = clusterRepositoryProblem(ref.repository);
  if (problem !== undefined) {
    throw new OciFormatError(
      `resolving cluster image ${JSON.stringify(value)}: ${problem.message}`,
    );
  }
  return ref;
}

/**
 * The cluster reference a `push SOURCE [DESTINATION]` publishes to. With a destination, it is
 * resolved by {@link resolveClusterImageReference} (so `web` is `web:latest`, as `--image web`
 * resolves it) and must be beneath `apps/` (`mirror/` is reserved for setup). Without one, the source registry host is replaced by the cluster registry and
 * its repository, tag and digest are kept beneath `apps/`:
 * `ghcr.io/acme/web:v1` → `registry.podmin.internal/apps/acme/web:v1`. Docker Hub sources are
 * taken with Docker's defaults first, so `nginx:1` (= `docker.io/library/nginx:1`) maps to
 * `registry.podmin.internal/apps/library/nginx:1`. A source already in the cluster registry
 * maps to itself.
 */
export function clusterDestination(source: string, destination?: string): QualifiedReference {
  if (destination !== undefined) {
    // Exactly what `--image <destination>` resolves to: a destination without a tag is :latest,
    // never the source's tag.
    const resolved = resolveClusterImageReference(destination);
    if (!resolved.repository.startsWith(`${APPS_NAMESPACE}/`)) {
      throw new OciFormatError(
        `resolving push destination ${JSON.stringify(destination)}: ${MIRROR_NAMESPACE}/ is reserved for setup-managed dependency images; push beneath ${APPS_NAMESPACE}/`,
      );
    }
    return resolved;
  }
  const parsed = parseReference(source);
  if (parsed.registry === CLUSTER_REGISTRY) {
    return parseClusterReference(source);
  }
  const ref = parseSourceReference(source);
  return checkedCluster(source, {
    ...ref,
    registry: CLUSTER_REGISTRY,
    repository: `${APPS_NAMESPACE}/${ref.repository}`,
  });
}

/**
 * The cluster reference of a setup-managed dependency image mirrored from `source`:
 * `registry.k8s.io/pause:3.10` → `registry.podmin.internal/mirror/registry.k8s.io/pause:3.10`.
 * The upstream registry must have no port (a `:` is not allowed in a repository component).
 */
export function mirrorReference(source: string): QualifiedReference {
  const ref = parseSourceReference(source);
  if (!isValidPathComponent(ref.registry)) {
    throw new OciFormatError(
      `mirroring ${JSON.stringify(source)}: registry ${ref.registry} cannot be a repository component (ports and uppercase are not allowed)`,
    );
  }
  return checkedCluster(source, {
    ...ref,
    registry: CLUSTER_REGISTRY,
    repository: `${MIRROR_NAMESPACE}/${ref.registry}/${ref.repository}`,
  });
}

/** Why a cluster repository name is refused: bad grammar, or outside `apps/` and `mirror/`. */
export interface RepositoryProblem {
  /** `invalid`: not the distribution grammar; `outside`: not beneath a served namespace. */
  kind: 'invalid' | 'outside';
  /** What is wrong. */
  message: string;
}

/**
 * Checks a repository path of the cluster registry (without the host): the distribution
 * grammar, at most 255 characters, and beneath `apps/<repository>` or
 * `mirror/<upstream-registry>/<repository>`. Returns undefined when it is acceptable.
 */
export function clusterRepositoryProblem(repository: string): RepositoryProblem | undefined {
  if (
    !isValidRepositoryPath(repository) ||
    CLUSTER_REGISTRY.length + 1 + repository.length > MAX_NAME_LENGTH
  ) {
    return {
      kind: 'invalid',
      message: `repository ${JSON.stringify(repository.slice(0, 300))} must be at most ${MAX_NAME_LENGTH - CLUSTER_REGISTRY.length - 1} characters of lowercase components matching [a-z0-9]+([._-][a-z0-9]+)* separated by "/"`,
    };
  }
  const parts = repository.split('/');
  const minimum = parts[0] === APPS_NAMESPACE ? 2 : parts[0] === MIRROR_NAMESPACE ? 3 : Infinity;
  if (parts.length < minimum) {
    return {
      kind: 'outside',
      message: `repository ${JSON.stringify(repository)} is not beneath ${APPS_NAMESPACE}/<repository> or ${MIRROR_NAMESPACE}/<registry>/<repository>`,
    };
  }
  return undefined;
}

/**
 * The bucket prefix of a cluster repository's OCI layout, with a trailing slash:
 * `apps/acme/web` → `apps/acme/web/`. OciFormatError for a name outside the two namespaces.
 */
export function repositoryPrefix(repository: string): string {
  const problem = clusterRepositoryProblem(repository);
  if (problem !== undefined) {
    throw new OciFormatError(`finding the bucket prefix: ${problem.message}`);
  }
  return `${repository}/`;
}

import { ValidationError } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';
import {
  CLUSTER_REGISTRY as OCI_CLUSTER_REGISTRY,
  formatReference,
  resolveClusterImageReference,
} from '@podmin/util-oci';

/** Host of the cluster's loopback-only registry; every Pod image must live under it. */
export const CLUSTER_REGISTRY: string = OCI_CLUSTER_REGISTRY;

const APPS_PREFIX = `${CLUSTER_REGISTRY}/apps/`;
const MIRROR_PREFIX = `${CLUSTER_REGISTRY}/mirror/`;
const PATH_COMPONENT = /^[a-z0-9]+(?:[._-][a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const DIGEST = /^(?:sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$/;
const MAX_NAME_LENGTH = 255;

/** Result of checking one image reference: the resolved cluster reference, or what is wrong. */
export type ImageCheck =
  { ok: true; image: string } | { ok: false; problem: FieldProblem; hint?: string };

function pushHint(ref: string): string {
  return `run \`podmin push ${ref}\` and use the cluster reference it prints`;
}

/**
 * Checks an image reference against the cluster registry rules without throwing; shorthand
 * (`hello:v1`, `example/web`) resolves under `registry.podmin.internal/apps/`, and no tag and no
 * digest means `:latest`, written out (`hello` → `registry.podmin.internal/apps/hello:latest`).
 */
export function checkClusterImage(ref: string, field: string): ImageCheck {
  const fail = (message: string): ImageCheck => ({ ok: false, problem: { field, message } });
  if (ref === '') {
    return fail('must not be empty; use a cluster image reference such as hello:v1');
  }

  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }

  const components = rest.split('/');
  const first = components[0] ?? '';
  // As with Docker, a first component names a registry host only when more components follow.
  const hasHost =
    components.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let repository: string;
  if (!hasHost) {
    repository = `${APPS_PREFIX}${rest}`;
  } else if (`${rest}/`.startsWith(APPS_PREFIX) || `${rest}/`.startsWith(MIRROR_PREFIX)) {
    repository = rest;
  } else if (first === CLUSTER_REGISTRY) {
    return fail(
      `"${ref}" is not under ${APPS_PREFIX} or ${MIRROR_PREFIX}; only those cluster registry paths are served`,
    );
  } else {
    return {
      ok: false,
      problem: {
        field,
        message: `"${ref}" names registry ${first}, but Pods may only use ${CLUSTER_REGISTRY} images; ${pushHint(ref)}`,
      },
      hint: pushHint(ref),
    };
  }

  const path = repository.slice(CLUSTER_REGISTRY.length + 1).split('/');
  if (path.length < 2 || !path.every((component) => PATH_COMPONENT.test(component))) {
    return fail(
      `"${ref}" has an invalid repository name; use lowercase path components matching [a-z0-9]+([._-][a-z0-9]+)* separated by "/", e.g. example/web:v1`,
    );
  }
  if (repository.length > MAX_NAME_LENGTH) {
    return fail(`"${ref}" has a repository name longer than ${MAX_NAME_LENGTH} characters`);
  }
  if (tag !== undefined && !TAG.test(tag)) {
    return fail(
      `"${ref}" has an invalid tag "${tag}"; tags match [A-Za-z0-9_][A-Za-z0-9._-]{0,127}`,
    );
  }
  if (digest !== undefined && !DIGEST.test(digest)) {
    return fail(
      `"${ref}" has an invalid digest "${digest}"; use sha256: with 64 or sha512: with 128 lowercase hex digits`,
    );
  }
  const written = `${repository}${tag === undefined ? '' : `:${tag}`}${digest === undefined ? '' : `@${digest}`}`;
  // The checks above name what is wrong; the resolution itself is util-oci's one rule (DESIGN
  // §6.16), the same `push` uses for its destination, so both print the same reference.
  try {
    return { ok: true, image: formatReference(resolveClusterImageReference(written)) };
  } catch (err) {
    return fail(`"${ref}" ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Resolves an image reference to the cluster registry, throwing a ValidationError that names
 * `field` (code INVALID_MANIFEST unless another is given) with guidance to run `podmin push`.
 */
export function resolveClusterImage(
  ref: string,
  field: string,
  code: 'INVALID_MANIFEST' | 'INVALID_ARGUMENT' = 'INVALID_MANIFEST',
): string {
  const result = checkClusterImage(ref, field);
  if (!result.ok) {
    throw new ValidationError('resolving image reference', [result.problem], {
      code,
      ...(result.hint === undefined ? {} : { hint: result.hint }),
    });
  }
  return result.image;
}

import { ValidationError } from '@podmin/util-errors';
import type { FieldProblem } from '@podmin/util-errors';
import { DNS1123_LABEL_RULE, isDns1123Label } from './names';
import { quantityProblem } from './quantity';

/** Image overrides from repeated `--image` flags: one bare reference, or container-name → reference. */
export interface ImageOverrides {
  /** A single `--image <ref>` applying to the only container. */
  bare?: string;
  /** `--image <container>=<ref>` values, in the order given. */
  named: Map<string, string>;
}

/** One Service port mapping from `--port SERVICE:TARGET`. */
export interface PortMapping {
  port: number;
  targetPort: number;
}

function invalidArgument(problems: FieldProblem[]): ValidationError {
  return new ValidationError('invalid arguments', problems, { code: 'INVALID_ARGUMENT' });
}

/** Problems with an ImageOverrides value (bare plus named, several bare, bad names); empty when valid. */
export function checkImageOverrides(images: ImageOverrides): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (images.bare !== undefined && images.named.size > 0) {
    problems.push({
      field: '--image',
      message:
        'cannot combine a bare --image <reference> with named --image <container>=<reference> values; use one form',
    });
  }
  if (images.bare === '') {
    problems.push({ field: '--image', message: 'must not be empty; pass an image reference' });
  }
  for (const [name, ref] of images.named) {
    if (!isDns1123Label(name)) {
      problems.push({
        field: '--image',
        message: `container name "${name}" in ${name}=${ref} must be ${DNS1123_LABEL_RULE}`,
      });
    }
    if (ref === '') {
      problems.push({
        field: '--image',
        message: `${name}= has no image reference; use --image ${name}=<reference>`,
      });
    }
  }
  return problems;
}

/** Parses repeated `--image` values: `name=ref` (named, DNS-1123 name) or one bare `ref`. */
export function parseImageFlags(values: readonly string[]): ImageOverrides {
  const problems: FieldProblem[] = [];
  const bare: string[] = [];
  const named = new Map<string, string>();
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq === -1) {
      bare.push(value);
      continue;
    }
    const name = value.slice(0, eq);
    const ref = value.slice(eq + 1);
    if (named.has(name)) {
      problems.push({
        field: '--image',
        message: `container "${name}" is given more than once; pass one --image ${name}=<reference>`,
      });
      continue;
    }
    named.set(name, ref);
  }
  if (bare.length > 1) {
    problems.push({
      field: '--image',
      message: `only one bare --image <reference> is allowed (got ${bare.length}); name each container with --image <container>=<reference>`,
    });
  }
  const images: ImageOverrides = { named };
  if (bare[0] !== undefined) {
    images.bare = bare[0];
  }
  problems.push(...checkImageOverrides(images));
  if (problems.length > 0) {
    throw invalidArgument(problems);
  }
  return images;
}

const PORT_TEXT = /^[0-9]{1,5}$/;

function parsePortNumber(text: string): number | undefined {
  if (!PORT_TEXT.test(text)) {
    return undefined;
  }
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** Parses repeatable, comma-separated `--port SERVICE:TARGET` values into port mappings. */
export function parsePortFlags(values: readonly string[]): PortMapping[] {
  const problems: FieldProblem[] = [];
  const mappings: PortMapping[] = [];
  const seen = new Set<number>();
  for (const value of values) {
    for (const pair of value.split(',')) {
      const parts = pair.split(':');
      const port = parts.length === 2 ? parsePortNumber(parts[0] ?? '') : undefined;
      const targetPort = parts.length === 2 ? parsePortNumber(parts[1] ?? '') : undefined;
      if (port === undefined || targetPort === undefined) {
        problems.push({
          field: '--port',
          message: `"${pair}" is not SERVICE:TARGET; both must be integers from 1 through 65535, e.g. --port 80:8080,443:8443`,
        });
        continue;
      }
      if (seen.has(port)) {
        problems.push({
          field: '--port',
          message: `service port ${port} is given more than once; each service port may appear once`,
        });
        continue;
      }
      seen.add(port);
      mappings.push({ port, targetPort });
    }
  }
  if (problems.length > 0) {
    throw invalidArgument(problems);
  }
  return mappings;
}

/** Problem with a `--cpu` or `--memory` quantity, or undefined when it is positive and kubelet accepts it. */
export function checkQuantity(flag: '--cpu' | '--memory', value: string): FieldProblem | undefined {
  const message = quantityProblem(value, {
    kind: flag === '--cpu' ? 'cpu' : 'memory',
    allowZero: false,
  });
  return message === undefined ? undefined : { field: flag, message };
}

/** Validates a positive `--cpu` or `--memory` quantity (e.g. `250m`, `0.5`, `512Mi`, `1G`) within kubelet's bounds. */
export function parseQuantity(flag: '--cpu' | '--memory', value: string): string {
  const problem = checkQuantity(flag, value);
  if (problem !== undefined) {
    throw invalidArgument([problem]);
  }
  return value;
}

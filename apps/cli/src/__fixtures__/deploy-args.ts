/**
 * `podmin deploy --no-preflight --no-pin <name> -g <nodegroup>`, then `more`: a deploy that skips
 * the registry (no preflight, tags kept: its images are never pushed).
 */
export function deployArgs(name: string, nodegroup: string, ...more: string[]): string[] {
  return ['deploy', '--no-preflight', '--no-pin', name, '-g', nodegroup, ...more];
}

/** `podmin deploy --no-preflight --no-pin web -g default --image <image>`, then `more`: most flows' deploy. */
export function deployWebArgs(image: string, ...more: string[]): string[] {
  return deployArgs('web', 'default', '--image', image, ...more);
}

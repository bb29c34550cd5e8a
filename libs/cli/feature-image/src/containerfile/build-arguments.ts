import type { Platform } from '@podmin/util-oci';
import { formatPlatform } from '@podmin/util-oci';
import { ContainerfileError } from './errors';
import type { Instruction } from './parser';
import { splitRaw } from './raw-words';
import type { WordSite } from './words';
import { expandWord } from './words';

/** Platform arguments and `--build-arg` values a build evaluates the Containerfile with. */
export interface BuildArguments {
  /** Platform being built (TARGET*). */
  target: Platform;
  /** Platform of the machine building (BUILD*). */
  build: Platform;
  /** `--build-arg NAME=value` pairs. */
  values: ReadonlyMap<string, string>;
}

/** The automatic platform arguments BuildKit predefines (TARGETOS, BUILDPLATFORM, …). */
export function platformArguments(args: BuildArguments): Map<string, string> {
  const vars = new Map<string, string>();
  for (const [prefix, platform] of [
    ['TARGET', args.target],
    ['BUILD', args.build],
  ] as const) {
    vars.set(`${prefix}PLATFORM`, formatPlatform(platform));
    vars.set(`${prefix}OS`, platform.os);
    vars.set(`${prefix}ARCH`, platform.architecture);
    vars.set(`${prefix}VARIANT`, platform.variant ?? '');
  }
  return vars;
}

/** Names and optional defaults of an `ARG` (one or more `NAME[=default]`). */
export function declareArgs(
  ins: Instruction,
  vars: ReadonlyMap<string, string>,
  args: BuildArguments,
  site: WordSite,
  declared: Set<string> | undefined,
): Array<[string, string | undefined]> {
  if (ins.keyword !== 'ARG') return [];
  const result: Array<[string, string | undefined]> = [];
  for (const word of splitRaw(ins.args)) {
    const eq = word.indexOf('=');
    const name = eq === -1 ? word : word.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new ContainerfileError(
        site.file,
        site.line,
        `ARG name ${JSON.stringify(name)} is not valid`,
      );
    }
    declared?.add(name);
    const fromFlag = args.values.get(name);
    const value = fromFlag ?? (eq === -1 ? undefined : expandWord(word.slice(eq + 1), vars, site));
    result.push([name, value]);
  }
  if (result.length === 0) {
    throw new ContainerfileError(site.file, site.line, 'ARG needs a name');
  }
  return result;
}

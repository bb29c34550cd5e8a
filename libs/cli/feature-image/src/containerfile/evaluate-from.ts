import type { Platform } from '@podmin/util-oci';
import { declareArgs, platformArguments, type BuildArguments } from './build-arguments';
import { ContainerfileError } from './errors';
import type { ParsedContainerfile } from './parser';
import type { WordSite } from './words';
import { expandWord, expandWords } from './words';

/** The `FROM` line: `scratch` or a base image (with an optional `--platform`). */
export interface FromStep {
  /** Line number of `FROM`. */
  line: number;
  /** `scratch`, or the base image reference after substitution. */
  image: string;
  /** `--platform` after substitution, when given. */
  platform: Platform | undefined;
  /** Index of the `FROM` instruction. */
  index: number;
}

/**
 * Evaluates the global `ARG`s and the single `FROM`. A second `FROM` (multi-stage build) is
 * refused: podmin builds one stage.
 */
export function evaluateFrom(file: ParsedContainerfile, args: BuildArguments): FromStep {
  const automatic = platformArguments(args);
  const globals = new Map<string, string>(automatic);
  let from: FromStep | undefined;
  file.instructions.forEach((ins, index) => {
    const site: WordSite = { file: file.file, line: ins.line, escape: file.escape };
    if (from === undefined) {
      if (ins.keyword === 'ARG') {
        for (const [name, value] of declareArgs(ins, globals, args, site, undefined)) {
          if (value !== undefined) globals.set(name, value);
        }
        return;
      }
      if (ins.keyword !== 'FROM') {
        throw new ContainerfileError(
          file.file,
          ins.line,
          `${ins.keyword} before FROM; only ARG may come before FROM`,
        );
      }
      const words = expandWords(ins.args, globals, site);
      if (words.length !== 1 && !(words.length === 3 && words[1]?.toLowerCase() === 'as')) {
        throw new ContainerfileError(file.file, ins.line, 'FROM takes IMAGE [AS NAME]');
      }
      const platformFlag = ins.flags['platform'];
      from = {
        line: ins.line,
        image: words[0] ?? '',
        platform:
          platformFlag === undefined
            ? undefined
            : parsePlatformArg(expandWord(platformFlag, globals, site), site),
        index,
      };
    } else if (ins.keyword === 'FROM') {
      throw new ContainerfileError(
        file.file,
        ins.line,
        'a second FROM starts another build stage; podmin build supports a single stage (no multi-stage builds)',
      );
    }
  });
  if (from === undefined) {
    throw new ContainerfileError(
      file.file,
      file.instructions.at(-1)?.line ?? 1,
      'no FROM instruction',
    );
  }
  return from;
}

/** `--platform=os/arch[/variant]` of FROM, after substitution. */
function parsePlatformArg(value: string, site: WordSite): Platform {
  const parts = value.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) {
    throw new ContainerfileError(
      site.file,
      site.line,
      `--platform=${value} is not os/arch[/variant]`,
    );
  }
  const [os = '', architecture = '', variant] = parts;
  return variant === undefined ? { os, architecture } : { os, architecture, variant };
}

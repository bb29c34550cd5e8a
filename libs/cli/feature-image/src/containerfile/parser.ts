import { ContainerfileError } from './errors';

/** One instruction of a Containerfile, with continuations joined. */
export interface Instruction {
  /** 1-based line where the instruction starts. */
  line: number;
  /** Upper-case keyword, e.g. `COPY`. */
  keyword: string;
  /** `--name=value` flags before the arguments (`--link` alone gives `''`). */
  flags: Record<string, string>;
  /** The arguments after the flags, unexpanded. */
  args: string;
  /** The instruction as written (continuations joined), for image history. */
  text: string;
}

/** A parsed Containerfile: its instructions and the escape character in effect. */
export interface ParsedContainerfile {
  /** File name used in messages. */
  file: string;
  /** The `# escape=` directive's character, `\` by default. */
  escape: string;
  /** Instructions in order. */
  instructions: Instruction[];
}

/** Instructions podmin packages without running anything. */
export const SUPPORTED_INSTRUCTIONS: readonly string[] = [
  'FROM',
  'ARG',
  'ENV',
  'WORKDIR',
  'COPY',
  'ADD',
  'LABEL',
  'USER',
  'EXPOSE',
  'ENTRYPOINT',
  'CMD',
  'VOLUME',
  'STOPSIGNAL',
  'SHELL',
  'MAINTAINER',
];

const REFUSED: Record<string, string> = {
  RUN: 'RUN needs to run a command, and podmin build cannot run commands: it only packages files (build the files elsewhere, then COPY them)',
  HEALTHCHECK:
    'HEALTHCHECK needs to run a command in the container; OCI images have no health check and kubelet ignores it, so podmin build refuses it (use a livenessProbe or readinessProbe in the manifest)',
  ONBUILD:
    'ONBUILD registers commands for later builds to run, and podmin build cannot run commands',
};

const FLAGS: Record<string, readonly string[]> = {
  FROM: ['platform'],
  COPY: ['chown', 'chmod', 'link', 'from', 'parents', 'exclude'],
  ADD: ['chown', 'chmod', 'link', 'checksum', 'keep-git-dir', 'unpack', 'exclude'],
};

/**
 * Parses a Containerfile/Dockerfile: parser directives (`# escape=`, `# syntax=` ignored),
 * comments, line continuations with the escape character, instruction flags. Instructions
 * that would need a command run (`RUN`, `HEALTHCHECK`, `ONBUILD`), heredocs and unknown
 * instructions are refused with a ContainerfileError naming the line.
 */
export function parseContainerfile(text: string, file = 'Containerfile'): ParsedContainerfile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let escape = '\\';
  let index = 0;
  // Parser directives: only at the very top, before any comment, blank line or instruction.
  while (index < lines.length) {
    const match = /^#\s*([A-Za-z]+)\s*=\s*(.*?)\s*$/.exec(lines[index] ?? '');
    if (match === null) break;
    const [, name = '', value = ''] = match;
    if (name.toLowerCase() === 'escape') {
      if (value !== '\\' && value !== '`') {
        throw new ContainerfileError(file, index + 1, 'the escape directive must be \\ or `');
      }
      escape = value;
    } else if (name.toLowerCase() !== 'syntax' && name.toLowerCase() !== 'check') {
      break;
    }
    index++;
  }
  const instructions: Instruction[] = [];
  while (index < lines.length) {
    const raw = lines[index] ?? '';
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) {
      index++;
      continue;
    }
    const start = index + 1;
    let joined = '';
    let line = raw.trimStart();
    for (;;) {
      const right = line.replace(/\s+$/, '');
      if (right.endsWith(escape)) {
        joined += right.slice(0, -1);
        index++;
        // Comment and empty lines inside a continuation are dropped, as Docker does.
        while (index < lines.length) {
          const next = (lines[index] ?? '').trim();
          if (next !== '' && !next.startsWith('#')) break;
          index++;
        }
        if (index >= lines.length) break;
        line = lines[index] ?? '';
        continue;
      }
      joined += line;
      index++;
      break;
    }
    instructions.push(parseInstruction(joined.trim(), start, file));
  }
  return { file, escape, instructions };
}

function parseInstruction(text: string, line: number, file: string): Instruction {
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  const keyword = (match?.[1] ?? '').toUpperCase();
  let rest = match?.[2] ?? '';
  const refusal = REFUSED[keyword];
  if (refusal !== undefined) {
    throw new ContainerfileError(file, line, refusal);
  }
  if (!SUPPORTED_INSTRUCTIONS.includes(keyword)) {
    throw new ContainerfileError(
      file,
      line,
      `unknown instruction ${JSON.stringify(match?.[1] ?? text)}; podmin build supports ${SUPPORTED_INSTRUCTIONS.join(', ')}`,
    );
  }
  if (/<<-?["']?[A-Za-z_]/.test(rest) && (keyword === 'COPY' || keyword === 'ADD')) {
    throw new ContainerfileError(file, line, `${keyword} with a heredoc is not supported`);
  }
  const flags: Record<string, string> = {};
  const allowed = FLAGS[keyword] ?? [];
  for (;;) {
    const flag = /^--([a-z-]+)(?:=(\S*))?(?:\s+|$)/.exec(rest);
    if (flag === null) break;
    const [whole, name = '', value = ''] = flag;
    if (!allowed.includes(name)) {
      throw new ContainerfileError(file, line, `${keyword} has no --${name} flag`);
    }
    flags[name] = value;
    rest = rest.slice(whole.length);
  }
  return { line, keyword, flags, args: rest.trim(), text };
}

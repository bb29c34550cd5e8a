import path from 'node:path';
import type { ContainerConfig } from '@podmin/util-oci';
import { ContainerfileError } from './errors';
import type { Instruction } from './parser';
import type { WordSite } from './words';
import { expandWord, expandWords, parseJsonArray } from './words';

/** One COPY or ADD, resolved: context sources, absolute destination, ownership and mode. */
export interface CopyStep {
  /** Line number, for messages. */
  line: number;
  /** `COPY` or `ADD`. */
  keyword: 'COPY' | 'ADD';
  /** Source paths or patterns relative to the build context. */
  sources: string[];
  /** Absolute destination in the image; ends with `/` when written as a directory. */
  destination: string;
  /** `--chown` uid and gid (0:0 when absent). */
  uid: number;
  /** Group id. */
  gid: number;
  /** `--chmod` mode bits, when given. */
  mode: number | undefined;
  /** Index into the stage's new history entries of the layer this step creates. */
  historyIndex: number;
}

/** Resolves one COPY or ADD against the stage's variables and working directory. */
export function copyStep(
  ins: Instruction,
  vars: ReadonlyMap<string, string>,
  config: ContainerConfig,
  site: WordSite,
  historyIndex: number,
): CopyStep {
  const fail = (why: string): never => {
    throw new ContainerfileError(site.file, site.line, why);
  };
  for (const flag of ['from', 'parents', 'exclude', 'checksum', 'keep-git-dir', 'unpack']) {
    if (ins.flags[flag] !== undefined) {
      fail(
        flag === 'from'
          ? `${ins.keyword} --from copies from another build stage or image; podmin build supports only files from the build context`
          : `${ins.keyword} --${flag} is not supported by podmin build`,
      );
    }
  }
  const json = parseJsonArray(ins.args);
  const words =
    json?.map((w) => expandWord(w, vars, { ...site, escape: '\0' })) ??
    expandWords(ins.args, vars, site);
  if (words.length < 2) fail(`${ins.keyword} needs at least one source and a destination`);
  const dest = words[words.length - 1] ?? '';
  const sources = words.slice(0, -1);
  if (ins.keyword === 'ADD') {
    const remote = sources.find((s) => /^(https?|git):\/\/|^git@/.test(s));
    if (remote !== undefined) {
      fail(
        `ADD ${remote}: downloading remote sources is not supported by podmin build; download it into the build context and COPY it`,
      );
    }
  }
  const absolute = path.posix.resolve(config.WorkingDir || '/', dest);
  const destination = dest.endsWith('/') && absolute !== '/' ? `${absolute}/` : absolute;
  let uid = 0;
  let gid = 0;
  const chown = ins.flags['chown'];
  if (chown !== undefined) {
    const value = expandWord(chown, vars, site);
    const match = /^(\d+|root)(?::(\d+|root))?$/.exec(value);
    if (match === null) {
      fail(
        `--chown=${value}: use numeric UID[:GID] (podmin build does not read the image's /etc/passwd or /etc/group)`,
      );
    }
    uid = match?.[1] === 'root' ? 0 : Number(match?.[1]);
    gid = match?.[2] === undefined ? uid : match[2] === 'root' ? 0 : Number(match[2]);
  }
  let mode: number | undefined;
  const chmod = ins.flags['chmod'];
  if (chmod !== undefined) {
    const value = expandWord(chmod, vars, site);
    if (!/^[0-7]{3,4}$/.test(value)) fail(`--chmod=${value}: use octal permissions such as 0755`);
    mode = parseInt(value, 8);
  }
  return {
    line: ins.line,
    keyword: ins.keyword as 'COPY' | 'ADD',
    sources,
    destination,
    uid,
    gid,
    mode,
    historyIndex,
  };
}

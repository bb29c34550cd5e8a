import path from 'node:path';
import type { ContainerConfig, HistoryEntry, Platform } from '@podmin/util-oci';
import { formatPlatform } from '@podmin/util-oci';
import { ContainerfileError } from './errors';
import type { Instruction, ParsedContainerfile } from './parser';
import type { WordSite } from './words';
import { expandWord, expandWords, parseJsonArray } from './words';

/** Platform arguments and `--build-arg` values a build evaluates the Containerfile with. */
export interface BuildArguments {
  /** Platform being built (TARGET*). */
  target: Platform;
  /** Platform of the machine building (BUILD*). */
  build: Platform;
  /** `--build-arg NAME=value` pairs. */
  values: ReadonlyMap<string, string>;
}

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

/** The image a stage describes, apart from its file layers. */
export interface StageResult {
  /** The resulting execution config. */
  config: ContainerConfig;
  /** Author from MAINTAINER, when set. */
  author: string | undefined;
  /** History entries for the instructions after FROM (copy steps are non-empty layers). */
  history: HistoryEntry[];
  /** The COPY/ADD steps in order, one layer each. */
  copies: CopyStep[];
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

/**
 * Evaluates the instructions after `FROM` on top of the base image's config: ARG/ENV
 * substitution, config changes and the COPY/ADD steps. Build arguments that are never
 * declared are returned in `unused` by the caller's comparison.
 */
export function evaluateStage(
  file: ParsedContainerfile,
  from: FromStep,
  args: BuildArguments,
  base: { config: ContainerConfig },
  declared: Set<string> = new Set(),
): StageResult {
  const automatic = platformArguments(args);
  const globals = new Map<string, string>(automatic);
  for (const ins of file.instructions.slice(0, from.index)) {
    const site: WordSite = { file: file.file, line: ins.line, escape: file.escape };
    for (const [name, value] of declareArgs(ins, globals, args, site, declared)) {
      if (value !== undefined) globals.set(name, value);
    }
  }
  const config: ContainerConfig = structuredClone(base.config);
  const stageArgs = new Map<string, string>();
  let shell = ['/bin/sh', '-c'];
  let cmdSet = false;
  let author: string | undefined;
  const history: HistoryEntry[] = [];
  const copies: CopyStep[] = [];
  const vars = (): Map<string, string> => {
    const merged = new Map(stageArgs);
    for (const entry of config.Env ?? []) {
      const eq = entry.indexOf('=');
      if (eq > 0) merged.set(entry.slice(0, eq), entry.slice(eq + 1));
    }
    return merged;
  };
  for (const ins of file.instructions.slice(from.index + 1)) {
    const site: WordSite = { file: file.file, line: ins.line, escape: file.escape };
    const fail = (why: string): never => {
      throw new ContainerfileError(file.file, ins.line, why);
    };
    let layer = false;
    switch (ins.keyword) {
      case 'ARG':
        for (const [name, value] of declareArgs(ins, vars(), args, site, declared)) {
          const inherited =
            value ?? args.values.get(name) ?? automatic.get(name) ?? globals.get(name);
          if (inherited !== undefined) stageArgs.set(name, inherited);
          else stageArgs.delete(name);
        }
        break;
      case 'ENV': {
        const pairs = keyValues(ins, vars(), site);
        for (const [key, value] of pairs) setEnv(config, key, value);
        break;
      }
      case 'LABEL': {
        const pairs = keyValues(ins, vars(), site);
        config.Labels = { ...config.Labels, ...Object.fromEntries(pairs) };
        break;
      }
      case 'WORKDIR': {
        const dir = expandWord(ins.args, vars(), site);
        if (dir === '') fail('WORKDIR needs a path');
        config.WorkingDir = path.posix.resolve(config.WorkingDir || '/', dir);
        break;
      }
      case 'USER': {
        const user = expandWord(ins.args, vars(), site);
        if (user === '') fail('USER needs a user[:group]');
        config.User = user;
        break;
      }
      case 'EXPOSE': {
        const ports = { ...config.ExposedPorts };
        for (const word of expandWords(ins.args, vars(), site)) {
          for (const port of exposedPorts(word, site)) ports[port] = {};
        }
        config.ExposedPorts = ports;
        break;
      }
      case 'VOLUME': {
        const volumes = { ...config.Volumes };
        const list = parseJsonArray(ins.args) ?? expandWords(ins.args, vars(), site);
        if (list.length === 0) fail('VOLUME needs a path');
        for (const volume of list) volumes[volume] = {};
        config.Volumes = volumes;
        break;
      }
      case 'STOPSIGNAL':
        config.StopSignal = expandWord(ins.args, vars(), site);
        break;
      case 'MAINTAINER':
        author = ins.args;
        break;
      case 'SHELL': {
        const list = parseJsonArray(ins.args);
        if (list === undefined || list.length === 0) {
          fail('SHELL must be a JSON array, e.g. ["/bin/sh", "-c"]');
        }
        shell = list ?? shell;
        break;
      }
      case 'ENTRYPOINT':
        config.Entrypoint = commandOf(ins, shell);
        if (!cmdSet) delete config.Cmd;
        break;
      case 'CMD':
        config.Cmd = commandOf(ins, shell);
        cmdSet = true;
        break;
      case 'COPY':
      case 'ADD':
        copies.push(copyStep(ins, vars(), config, site, history.length));
        layer = true;
        break;
      default:
        fail(`${ins.keyword} is not supported here`);
    }
    history.push(
      layer
        ? { created_by: ins.text, comment: 'podmin build' }
        : { created_by: ins.text, comment: 'podmin build', empty_layer: true },
    );
  }
  return { config, author, history, copies };
}

/** Names and optional defaults of an `ARG` (one or more `NAME[=default]`). */
function declareArgs(
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

/** Splits on unquoted whitespace without removing quotes (substitution happens later). */
function splitRaw(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (quote !== undefined) {
      current += ch;
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"' && i + 1 < text.length) current += text[++i];
    } else if (/\s/.test(ch)) {
      if (current !== '') words.push(current);
      current = '';
    } else {
      if (ch === '"' || ch === "'") quote = ch;
      if (ch === '\\' && i + 1 < text.length) {
        current += ch + (text[++i] ?? '');
        continue;
      }
      current += ch;
    }
  }
  if (current !== '') words.push(current);
  return words;
}

/** `KEY=value …` pairs, or the legacy `KEY value with spaces` form of ENV and LABEL. */
function keyValues(
  ins: Instruction,
  vars: ReadonlyMap<string, string>,
  site: WordSite,
): Array<[string, string]> {
  const raw = splitRaw(ins.args);
  const first = raw[0];
  if (first === undefined) {
    throw new ContainerfileError(site.file, site.line, `${ins.keyword} needs KEY=value`);
  }
  if (!first.includes('=')) {
    if (ins.keyword === 'LABEL') {
      throw new ContainerfileError(site.file, site.line, 'LABEL needs KEY=value pairs');
    }
    const rest = ins.args.slice(ins.args.indexOf(first) + first.length).trim();
    return [[expandWord(first, vars, site), expandWord(rest, vars, site)]];
  }
  return raw.map((word): [string, string] => {
    const eq = word.indexOf('=');
    if (eq <= 0) {
      throw new ContainerfileError(
        site.file,
        site.line,
        `${ins.keyword} ${JSON.stringify(word)} is not KEY=value`,
      );
    }
    return [expandWord(word.slice(0, eq), vars, site), expandWord(word.slice(eq + 1), vars, site)];
  });
}

function setEnv(config: ContainerConfig, key: string, value: string): void {
  const env = [...(config.Env ?? [])];
  const at = env.findIndex((e) => e.startsWith(`${key}=`));
  if (at === -1) env.push(`${key}=${value}`);
  else env[at] = `${key}=${value}`;
  config.Env = env;
}

function exposedPorts(word: string, site: WordSite): string[] {
  const match = /^(\d+)(?:-(\d+))?(?:\/(tcp|udp|sctp))?$/i.exec(word);
  const low = Number(match?.[1]);
  const high = match?.[2] === undefined ? low : Number(match[2]);
  if (match === null || low < 1 || high > 65535 || high < low || high - low > 1000) {
    throw new ContainerfileError(
      site.file,
      site.line,
      `EXPOSE ${JSON.stringify(word)} is not PORT[-PORT][/tcp|udp|sctp]`,
    );
  }
  const proto = (match[3] ?? 'tcp').toLowerCase();
  const ports: string[] = [];
  for (let p = low; p <= high; p++) ports.push(`${p}/${proto}`);
  return ports;
}

function commandOf(ins: Instruction, shell: string[]): string[] {
  const exec = parseJsonArray(ins.args);
  if (exec !== undefined) return exec;
  return [...shell, ins.args];
}

function copyStep(
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

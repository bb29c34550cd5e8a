import path from 'node:path';
import type { ContainerConfig } from '@podmin/util-oci';
import { ContainerfileError } from './errors';
import type { Instruction } from './parser';
import { keyValues } from './raw-words';
import type { WordSite } from './words';
import { expandWord, expandWords, parseJsonArray } from './words';

/** What the instructions after FROM have set so far, apart from layers and history. */
export interface StageState {
  /** The execution config, starting from the base image's. */
  config: ContainerConfig;
  /** ARG values declared in the stage. */
  stageArgs: Map<string, string>;
  /** The shell form's prefix (SHELL). */
  shell: string[];
  /** Whether CMD was given (ENTRYPOINT then keeps it). */
  cmdSet: boolean;
  /** Author from MAINTAINER. */
  author: string | undefined;
}

/** The variables an instruction substitutes: the stage's ARGs, overridden by its ENV. */
export function stageVariables(stage: StageState): Map<string, string> {
  const merged = new Map(stage.stageArgs);
  for (const entry of stage.config.Env ?? []) {
    const eq = entry.indexOf('=');
    if (eq > 0) merged.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return merged;
}

/**
 * Applies one instruction that changes only the config or metadata (ENV, LABEL, WORKDIR, USER,
 * EXPOSE, VOLUME, STOPSIGNAL, MAINTAINER, SHELL, ENTRYPOINT, CMD); refuses any other keyword.
 */
export function applyConfigInstruction(
  stage: StageState,
  ins: Instruction,
  vars: () => Map<string, string>,
  site: WordSite,
): void {
  const config = stage.config;
  const fail = (why: string): never => {
    throw new ContainerfileError(site.file, ins.line, why);
  };
  switch (ins.keyword) {
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
      stage.author = ins.args;
      break;
    case 'SHELL': {
      const list = parseJsonArray(ins.args);
      if (list === undefined || list.length === 0) {
        fail('SHELL must be a JSON array, e.g. ["/bin/sh", "-c"]');
      }
      stage.shell = list ?? stage.shell;
      break;
    }
    case 'ENTRYPOINT':
      config.Entrypoint = commandOf(ins, stage.shell);
      if (!stage.cmdSet) delete config.Cmd;
      break;
    case 'CMD':
      config.Cmd = commandOf(ins, stage.shell);
      stage.cmdSet = true;
      break;
    default:
      fail(`${ins.keyword} is not supported here`);
  }
}

/** Sets one ENV entry, replacing an earlier value of the same key in place. */
function setEnv(config: ContainerConfig, key: string, value: string): void {
  const env = [...(config.Env ?? [])];
  const at = env.findIndex((e) => e.startsWith(`${key}=`));
  if (at === -1) env.push(`${key}=${value}`);
  else env[at] = `${key}=${value}`;
  config.Env = env;
}

/** The `PORT/proto` keys of one EXPOSE word (a range gives every port in it). */
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

/** ENTRYPOINT or CMD in exec form, or the shell form wrapped in the stage's shell. */
function commandOf(ins: Instruction, shell: string[]): string[] {
  const exec = parseJsonArray(ins.args);
  if (exec !== undefined) return exec;
  return [...shell, ins.args];
}

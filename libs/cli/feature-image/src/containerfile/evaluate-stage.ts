import type { ContainerConfig, HistoryEntry } from '@podmin/util-oci';
import { declareArgs, platformArguments, type BuildArguments } from './build-arguments';
import { copyStep, type CopyStep } from './copy-step';
import type { FromStep } from './evaluate-from';
import type { ParsedContainerfile } from './parser';
import { applyConfigInstruction, stageVariables, type StageState } from './stage-config';
import type { WordSite } from './words';

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
  const stage: StageState = {
    config: structuredClone(base.config),
    stageArgs: new Map<string, string>(),
    shell: ['/bin/sh', '-c'],
    cmdSet: false,
    author: undefined,
  };
  const history: HistoryEntry[] = [];
  const copies: CopyStep[] = [];
  const vars = (): Map<string, string> => stageVariables(stage);
  for (const ins of file.instructions.slice(from.index + 1)) {
    const site: WordSite = { file: file.file, line: ins.line, escape: file.escape };
    let layer = false;
    if (ins.keyword === 'ARG') {
      for (const [name, value] of declareArgs(ins, vars(), args, site, declared)) {
        const inherited =
          value ?? args.values.get(name) ?? automatic.get(name) ?? globals.get(name);
        if (inherited !== undefined) stage.stageArgs.set(name, inherited);
        else stage.stageArgs.delete(name);
      }
    } else if (ins.keyword === 'COPY' || ins.keyword === 'ADD') {
      copies.push(copyStep(ins, vars(), stage.config, site, history.length));
      layer = true;
    } else {
      applyConfigInstruction(stage, ins, vars, site);
    }
    history.push(
      layer
        ? { created_by: ins.text, comment: 'podmin build' }
        : { created_by: ins.text, comment: 'podmin build', empty_layer: true },
    );
  }
  return { config: stage.config, author: stage.author, history, copies };
}

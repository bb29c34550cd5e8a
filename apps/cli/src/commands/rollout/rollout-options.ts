import type { Argv } from 'yargs';

/** Flags that name one deployment: `<name>` and `-g NG`. */
export interface RolloutTargetArgs {
  name: string;
  nodegroup: string;
}

/** Adds the `<name>` positional and the required `-g/--nodegroup`. */
export function withRolloutTarget<T>(y: Argv<T>) {
  return y
    .positional('name', { type: 'string', demandOption: true, describe: 'Deployment name' })
    .option('nodegroup', {
      alias: 'g',
      type: 'string',
      demandOption: true,
      describe: 'NodeGroup of the deployment',
    });
}

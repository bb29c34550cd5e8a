import type { Argv } from 'yargs';

/** Flags that name one deployment: `<name>` and `-g NG`. */
export interface DeploymentTargetArgs {
  name: string;
  nodegroup: string;
}

/**
 * Adds the `<name>` positional and the required `-g/--nodegroup` of the commands that act on one
 * deployment (delete, history, rollback, logs, rollout).
 */
export function withDeploymentTarget<T>(y: Argv<T>) {
  return y
    .positional('name', { type: 'string', demandOption: true, describe: 'Deployment name' })
    .option('nodegroup', {
      alias: 'g',
      type: 'string',
      demandOption: true,
      describe: 'NodeGroup of the deployment',
    });
}

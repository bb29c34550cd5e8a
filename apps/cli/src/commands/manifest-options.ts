import type { Argv } from 'yargs';

/** Flags of the built-in manifest shared by `init` and `deploy`. */
export interface ManifestFlagArgs {
  nodegroup: string;
  namespace?: string;
  image: string[];
  service?: boolean;
  port: string[];
  cpu?: string;
  memory?: string;
}

/** Adds the built-in manifest flags to a command. */
export function withManifestFlags<T>(y: Argv<T>) {
  return y
    .option('nodegroup', {
      alias: 'g',
      type: 'string',
      demandOption: true,
      describe: 'NodeGroup the Pod runs on',
    })
    .option('namespace', { type: 'string', describe: 'Namespace (default "default")' })
    .option('image', {
      type: 'string',
      array: true,
      default: [] as string[],
      describe: 'Image: one bare IMAGE, or NAME=IMAGE per container (repeatable)',
    })
    .option('service', {
      type: 'boolean',
      describe: 'Add a TCP Service (443→8443, HTTPS /healthz readiness)',
    })
    .option('port', {
      type: 'string',
      array: true,
      default: [] as string[],
      describe: 'Service ports SERVICE:TARGET[,SERVICE:TARGET…] replacing the default (repeatable)',
    })
    .option('cpu', { type: 'string', describe: 'CPU limit for every container, e.g. 500m' })
    .option('memory', { type: 'string', describe: 'Memory limit for every container, e.g. 256Mi' });
}

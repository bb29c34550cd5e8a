import { lifecycleCommand } from '../lifecycle-command';

/** `podmin teardown`: stop compute; the bucket, context and CA secrets are kept. */
export const teardownCommand = lifecycleCommand({
  operation: 'teardown',
  describe:
    "Destroy the cluster's compute and networking (AWS: through OpenTofu/Terraform; local: stop this machine's agent); bucket, context and CA secrets are kept",
  yesDescribe:
    'Destroy without asking (required when there is no terminal); a stale state lock is then reported with its force-unlock command, never forced',
  examples: [
    ['$0 teardown', 'AWS: plan the destruction, show it, ask, destroy'],
    ['$0 teardown -y', 'AWS: destroy without asking'],
    ['$0 teardown', 'Local: stop podmin-agent of every local NodeGroup of the cluster'],
  ],
  epilogue:
    'On AWS the module inputs are restored from tfstate/podmin.auto.tfvars.json in the bucket, so a teardown works after `podmin disconnect` and `podmin connect` too. `podmin setup` brings the cluster back with the same CAs.',
});

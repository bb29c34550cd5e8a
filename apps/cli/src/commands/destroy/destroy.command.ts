import { lifecycleCommand } from '../lifecycle-command';

/** `podmin destroy`: remove the whole cluster, its bucket and CAs, then its context. */
export const destroyCommand = lifecycleCommand({
  operation: 'destroy',
  describe:
    'Destroy the cluster for good: its infrastructure (OpenTofu/Terraform), both CA secrets, every object and the bucket; the context is removed only after all of that succeeded',
  yesDescribe: 'Destroy without asking (required when there is no terminal)',
  examples: [
    ['$0 destroy', 'Ask once, then destroy the current cluster and its bucket'],
    ['$0 destroy -y', 'Destroy without asking (scripts)'],
  ],
  epilogue:
    'To hand the bucket to another owner instead, use `podmin teardown` and `podmin disconnect`; destroy deletes it.',
});

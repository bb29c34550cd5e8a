import { rolloutStateCommand } from './rollout-state-command';

/** `podmin rollout resume <name> -g NG`: undo a pause, or try again after a halt. */
export const resumeRolloutCommand = rolloutStateCommand({
  command: 'resume <name>',
  describe: 'Resume a paused or halted rollout of a deployment',
  example: ['$0 rollout resume web -g default', 'Nodes move on to the new revision in waves'],
  epilogue:
    'Clears paused in the cluster rollout state (dns/rollouts.json) by compare-and-swap. After a halt (a node whose new Pod was not available within the progress deadline) it also clears the halt and starts a new attempt, so the nodes that failed try again. Fix the cause first, or deploy another revision.',
  operation: 'resumeRollout',
});

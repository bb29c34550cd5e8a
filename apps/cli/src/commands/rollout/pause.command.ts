import { rolloutStateCommand } from './rollout-state-command';

/** `podmin rollout pause <name> -g NG`: no new node moves to the target revision. */
export const pauseRolloutCommand = rolloutStateCommand({
  command: 'pause <name>',
  describe: 'Pause the rollout of a deployment: no new node moves to its new revision',
  example: ['$0 rollout pause web -g default', 'Hold the rollout of web where it is'],
  epilogue:
    'Sets paused in the cluster rollout state (dns/rollouts.json) by compare-and-swap; the leader agent then admits no new node. Nodes already moving finish. Works before a deploy too: the next revision then waits. Undo with `podmin rollout resume`.',
  operation: 'pauseRollout',
});

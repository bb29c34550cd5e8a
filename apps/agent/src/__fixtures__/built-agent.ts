// The built podmin-agent as the integration specs run it: one process on loopback ports of the
// test's choosing, with its output kept so a failure can show what the agent said last.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** The bundle `nx build agent` writes; the integration target builds it first. */
export const AGENT_BIN = path.resolve(__dirname, '../../../../dist/bin/podmin-agent.cjs');

/** The loopback ports one agent listens on (a test picks free ones). */
export interface AgentPorts {
  health: number;
  registry: number;
  dns: number;
  coordination: number;
}

/** What a spec varies between agents: flags, node root, ports and extra environment. */
export interface BuiltAgentOptions {
  /** The agent's flags (`--provider …`); `localAgentArgs(bucket)` for the local provider. */
  args: readonly string[];
  nodeRoot: string;
  ports: AgentPorts;
  /** The node's id; `node-1` when omitted. */
  nodeId?: string;
  /** Added to the environment (secrets file, AWS endpoint and credentials). */
  env?: Readonly<Record<string, string>>;
  /** The supervisor program; {@link AGENT_BIN} when omitted (an extracted artifact's, say). */
  program?: string;
  /**
   * Start it as the leader of its own process group (as systemd starts a unit's main process,
   * and a shell a foreground job), so the test can signal the whole group; `stop`'s SIGKILL then
   * reaches every service process too.
   */
  groupLeader?: boolean;
}

/** A running built agent. */
export interface BuiltAgent {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output: () => string;
  /** Its last `lines` lines of output, for a failure message. */
  tail: (lines?: number) => string;
  /** Resolves with its exit code once it has closed its pipes. */
  exited: Promise<number>;
  /** SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
  stop: (graceMs?: number) => Promise<void>;
}

/** Starts `dist/bin/podmin-agent.cjs` with only PATH from this environment, on `ports`. */
export function spawnBuiltAgent(options: BuiltAgentOptions): BuiltAgent {
  const { ports } = options;
  const child = spawn(process.execPath, [options.program ?? AGENT_BIN, ...options.args], {
    env: {
      PATH: process.env['PATH'] ?? '',
      PODMIN_AGENT_HEALTH_ADDRESS: `127.0.0.1:${ports.health}`,
      PODMIN_AGENT_REGISTRY_LISTEN: `127.0.0.1:${ports.registry}`,
      PODMIN_AGENT_DNS_LISTEN: `127.0.0.1:${ports.dns}`,
      PODMIN_AGENT_COORDINATION_PORT: String(ports.coordination),
      // The coordinator binds the node address: loopback, on this test's own ports.
      PODMIN_NODE_ADDRESS: '::1',
      PODMIN_NODE_ID: options.nodeId ?? 'node-1',
      PODMIN_NODE_ROOT: options.nodeRoot,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.groupLeader === true,
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return {
    child,
    output: () => output,
    tail: (lines = 20) => output.split('\n').slice(-lines).join('\n'),
    exited,
    stop: async (graceMs = 15_000) => {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      if (options.groupLeader !== true) child.kill('SIGKILL');
      else
        try {
          process.kill(-(child.pid ?? 0), 'SIGKILL');
        } catch {
          // The group is gone already.
        }
    },
  };
}

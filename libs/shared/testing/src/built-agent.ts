// The built podmin-agent as the integration specs run it: one process on loopback ports of the
// test's choosing, with its output kept so a failure can show what the agent said last.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './repo-root';
import { freeLoopbackPort } from './wait';

/** The bundle `nx build agent` writes (`dist/bin/podmin-agent.cjs`); integration targets build it first. */
export const AGENT_BIN = path.join(repoRoot(), 'dist/bin/podmin-agent.cjs');

/** The loopback ports one agent listens on (a test picks free ones). */
export interface AgentPorts {
  health: number;
  registry: number;
  dns: number;
  coordination: number;
}

/** Four free loopback ports for one agent, so agents of concurrent tests never collide. */
export async function freeAgentPorts(): Promise<AgentPorts> {
  return {
    health: await freeLoopbackPort(),
    registry: await freeLoopbackPort(),
    dns: await freeLoopbackPort(),
    coordination: await freeLoopbackPort(),
  };
}

/**
 * The environment that puts an agent on `ports` of loopback (never the node's default
 * addresses) with `nodeRoot` as its node root; the coordinator binds `::1`.
 */
export function agentNodeEnv(
  ports: AgentPorts,
  nodeRoot: string,
  nodeId = 'node-1',
): Record<string, string> {
  return {
    PODMIN_AGENT_HEALTH_ADDRESS: `127.0.0.1:${ports.health}`,
    PODMIN_AGENT_REGISTRY_LISTEN: `127.0.0.1:${ports.registry}`,
    PODMIN_AGENT_DNS_LISTEN: `127.0.0.1:${ports.dns}`,
    PODMIN_AGENT_COORDINATION_PORT: String(ports.coordination),
    // The coordinator binds the node address: loopback, on this test's own ports.
    PODMIN_NODE_ADDRESS: '::1',
    PODMIN_NODE_ID: nodeId,
    PODMIN_NODE_ROOT: nodeRoot,
  };
}

/** What a spec varies between agents: flags, node root, ports and extra environment. */
export interface BuiltAgentOptions {
  /** The agent's flags (`--provider …`); `localAgentArgs(bucket)` for the local provider. */
  args: readonly string[];
  /** The node root; with {@link ports}, see {@link agentNodeEnv}. Both omitted: only PATH and `env`. */
  nodeRoot?: string;
  ports?: AgentPorts;
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

/** Starts {@link AGENT_BIN} with only PATH from this environment, on `ports` when given. */
export function spawnBuiltAgent(options: BuiltAgentOptions): BuiltAgent {
  const { ports, nodeRoot } = options;
  if ((ports === undefined) !== (nodeRoot === undefined))
    throw new Error('spawnBuiltAgent: give both ports and nodeRoot, or neither');
  const child = spawn(process.execPath, [options.program ?? AGENT_BIN, ...options.args], {
    env: {
      PATH: process.env['PATH'] ?? '',
      ...(ports === undefined || nodeRoot === undefined
        ? {}
        : agentNodeEnv(ports, nodeRoot, options.nodeId)),
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

/** A built agent running on loopback ports of its own. */
export interface StartedAgent {
  agent: BuiltAgent;
  ports: AgentPorts;
}

/** Starts {@link AGENT_BIN} (see {@link spawnBuiltAgent}) on four free loopback ports. */
export async function startBuiltAgent(
  options: Omit<BuiltAgentOptions, 'ports' | 'nodeRoot'> & { nodeRoot: string },
): Promise<StartedAgent> {
  const ports = await freeAgentPorts();
  return { agent: spawnBuiltAgent({ ...options, ports }), ports };
}

/** The environment that points an `--provider aws` agent at the AWS-API emulator. */
export function emulatorAgentEnv(emulator: {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: emulator.endpoint,
    AWS_ENDPOINT_URL_S3: emulator.endpoint,
    AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

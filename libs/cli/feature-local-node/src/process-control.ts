/** Whether a process with this pid exists (signal 0 checks without signalling). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until none of `pids` is alive, polling every 100 ms for at most `boundMs`. */
export async function awaitExit(pids: readonly number[], boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

/**
 * Sends SIGTERM, waits up to `graceMs` for the process to exit, then sends SIGKILL and waits up
 * to `killWaitMs` more. A process that is already gone is left alone.
 */
export async function stopProcess(pid: number, graceMs: number, killWaitMs = 0): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  await awaitExit([pid], graceMs);
  if (!alive(pid)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  await awaitExit([pid], killWaitMs);
}

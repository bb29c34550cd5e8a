import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * The pids holding the socket that listens on TCP `port` (any address, IPv4 or IPv6), as
 * `<procRoot>/net/tcp`, `<procRoot>/net/tcp6` and `<procRoot>/<pid>/fd/*` show them; sorted, and
 * empty when it cannot tell (no listener, no /proc, or fds this user may not read).
 * Hand-written: no maintained library maps a listening port to its process from /proc.
 */
export async function listeningPids(port: number, procRoot = '/proc'): Promise<number[]> {
  const sockets = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = await fsp.readFile(path.join(procRoot, 'net', table), 'utf8');
    } catch {
      continue;
    }
    // Columns: sl local_address rem_address st … uid timeout inode; addresses end in :PORT (hex).
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      if (local === undefined || inode === undefined || state !== '0A' || inode === '0') continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port)
        sockets.add(`socket:[${inode}]`);
    }
  }
  if (sockets.size === 0) return [];
  let entries: string[];
  try {
    entries = await fsp.readdir(procRoot);
  } catch {
    return [];
  }
  const owners: number[] = [];
  for (const entry of entries.filter((e) => /^\d+$/.test(e))) {
    const fdDir = path.join(procRoot, entry, 'fd');
    // Another user's fds are unreadable (EACCES), and a process may exit while we look.
    const fds = await fsp.readdir(fdDir).catch(() => [] as string[]);
    const links = await Promise.all(
      fds.map((fd) => fsp.readlink(path.join(fdDir, fd)).catch(() => '')),
    );
    if (links.some((link) => sockets.has(link))) owners.push(Number(entry));
  }
  return owners.sort((a, b) => a - b);
}

// What /proc says of a process: CPU time of all its threads and descendants, and its memory.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** utime+stime in seconds of every thread of `pid` and of its descendants' threads. */
export function cpuSeconds(pid) {
  const parents = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  }
  let ticks = 0;
  for (const p of tree) {
    let tasks = [];
    try {
      tasks = fs.readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const stat = fs.readFileSync(`/proc/${p}/task/${task}/stat`, 'utf8');
        // Fields after "pid (comm) ": state is [0], utime [11], stime [12].
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks += Number(fields[11]) + Number(fields[12]);
      } catch {
        // a thread that ended meanwhile
      }
    }
  }
  return ticks / CLK_TCK;
}

/** VmRSS and VmHWM of a process, in MiB. */
export function rss(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return `RSS ${(kib('VmRSS') / 1024).toFixed(1)} MiB (peak ${(kib('VmHWM') / 1024).toFixed(1)})`;
}

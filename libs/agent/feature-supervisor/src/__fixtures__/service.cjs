// A stand-in service process for supervisor tests: MODE=ready stays up and reports ready,
// MODE=crash exits 3 after a moment, MODE=stubborn ignores SIGTERM and the stop word,
// MODE=unhealthy reports ill health, MODE=garbage sends a malformed health message,
// MODE=supervised ignores SIGTERM and SIGINT as a real service process does under a supervisor.
// Every mode but stubborn exits 0 on the supervisor's stop word. Logs one JSON line.
const mode = process.argv[2] || 'ready';
process.stderr.write(
  JSON.stringify({
    level: 'info',
    component: 'fixture',
    msg: 'started',
    mode,
    execArgv: process.execArgv,
    malloc: Object.fromEntries(
      Object.entries(process.env).filter(([k]) => k.startsWith('MALLOC_')),
    ),
  }) + '\n',
);
process.stdout.write('plain text line\n');
if (mode === 'crash') setTimeout(() => process.exit(3), 50);
else {
  if (mode === 'stubborn' || mode === 'supervised') {
    process.on('SIGTERM', () => undefined);
    process.on('SIGINT', () => undefined);
  } else process.on('SIGTERM', () => process.exit(0));
  if (mode !== 'stubborn')
    process.on('message', (m) => {
      if (m && m.type === 'stop') process.exit(0);
    });
  if (process.send) process.send({ type: 'ready' });
  if (mode === 'garbage' && process.send) process.send({ type: 'health', healthy: 'yes' });
  if (mode === 'unhealthy' && process.send)
    process.send({ type: 'health', healthy: false, detail: 'index unreachable' });
  setInterval(() => undefined, 1000);
}

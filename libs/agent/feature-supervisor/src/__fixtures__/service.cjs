// A stand-in service process for supervisor tests: MODE=ready stays up and reports ready,
// MODE=crash exits 3 after a moment, MODE=stubborn ignores SIGTERM, MODE=unhealthy reports ill health,
// MODE=garbage sends a malformed health message. Logs one JSON line.
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
  if (mode === 'stubborn') process.on('SIGTERM', () => undefined);
  else process.on('SIGTERM', () => process.exit(0));
  if (process.send) process.send({ type: 'ready' });
  if (mode === 'garbage' && process.send) process.send({ type: 'health', healthy: 'yes' });
  if (mode === 'unhealthy' && process.send)
    process.send({ type: 'health', healthy: false, detail: 'index unreachable' });
  setInterval(() => undefined, 1000);
}

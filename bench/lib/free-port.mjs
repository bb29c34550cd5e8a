import net from 'node:net';

/** A TCP port on 127.0.0.1 free right now (the kernel's pick), for a listener a bench starts. */
export function freeLoopbackPort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

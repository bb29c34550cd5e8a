import 'reflect-metadata';
import dgram from 'node:dgram';
import * as dnsPacket from 'dns-packet';
import { NestFactory } from '@nestjs/core';
import { serviceVip } from '@podmin/util-desired-state';
import { DnsModule } from './dns.module';
import { DnsServer } from './dns-server';
import { DnsZone } from './dns-zone';
import type { ZoneSource } from './dns.ports';

type Decoded = dnsPacket.DecodedPacket & { rcode: string };

/** A ZoneSource the test pushes zones into by hand. */
class ManualZoneSource implements ZoneSource {
  readonly listeners = new Set<(zone: DnsZone) => void>();
  subscribe(listener: (zone: DnsZone) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  push(zone: DnsZone): void {
    for (const listener of this.listeners) listener(zone);
  }
}

/** One UDP query to the server; resolves to the decoded reply, or undefined after 500 ms. */
function ask(port: number, name: string): Promise<Decoded | undefined> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      resolve(undefined);
    }, 500);
    socket.once('message', (msg) => {
      clearTimeout(timer);
      socket.close();
      resolve(dnsPacket.decode(msg) as Decoded);
    });
    socket.send(
      dnsPacket.encode({ type: 'query', id: 3, questions: [{ name, type: 'AAAA' }] }),
      port,
      '127.0.0.1',
    );
  });
}

describe('DnsModule', () => {
  it('listens on bootstrap, follows the zone source and closes on shutdown', async () => {
    const source = new ManualZoneSource();
    const app = await NestFactory.createApplicationContext(
      DnsModule.register({ server: { port: 0 }, zoneSource: { useValue: source } }),
      { logger: false },
    );
    await app.init();
    const server = app.get(DnsServer);
    const { port } = server.address();
    expect((await ask(port, 'web.default.svc.cluster.local'))?.rcode).toBe('SERVFAIL');
    source.push(
      DnsZone.build({
        cluster: 'podmin',
        generation: 1,
        services: [{ namespace: 'default', name: 'web' }],
      }),
    );
    const reply = await ask(port, 'web.default.svc.cluster.local');
    expect(reply?.answers?.[0]).toMatchObject({
      type: 'AAAA',
      data: serviceVip('podmin', 'default', 'web'),
    });
    expect(source.listeners.size).toBe(1);
    await app.close();
    expect(source.listeners.size).toBe(0);
    expect(await ask(port, 'web.default.svc.cluster.local')).toBeUndefined();
  });
});

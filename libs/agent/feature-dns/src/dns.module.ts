import {
  Inject,
  Injectable,
  Module,
  type ClassProvider,
  type DynamicModule,
  type ExistingProvider,
  type FactoryProvider,
  type ModuleMetadata,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type ValueProvider,
} from '@nestjs/common';
import { DnsServer } from './dns-server';
import type { DnsServerOptions } from './dns-server-options';
import { DnsZone } from './dns-zone';
import { ZONE_SOURCE, type ZoneSource } from './dns.ports';

/** Injection token of the DnsServerOptions. */
export const DNS_SERVER_OPTIONS = Symbol('DNS_SERVER_OPTIONS');

/** How the importing process supplies its ZoneSource (any Nest provider form but the token). */
export type ZoneSourceProvider =
  | Omit<ValueProvider<ZoneSource>, 'provide'>
  | Omit<FactoryProvider<ZoneSource>, 'provide'>
  | Omit<ClassProvider<ZoneSource>, 'provide'>
  | Omit<ExistingProvider<ZoneSource>, 'provide'>;

/** What DnsModule.register takes. */
export interface DnsModuleOptions {
  /** Listener settings; the default is 127.0.0.1:1053. */
  server?: DnsServerOptions;
  zoneSource: ZoneSourceProvider;
  /** Modules the zone source's provider needs. */
  imports?: ModuleMetadata['imports'];
  /** Called once the listeners are bound (the process logs which UDP path serves). */
  onListening?: (server: DnsServer) => void;
}

/** Injection token of the onListening callback. */
const DNS_ON_LISTENING = Symbol('DNS_ON_LISTENING');

/**
 * Binds the DNS server when the application starts and feeds it every zone of the source;
 * until the first zone it answers SERVFAIL in the zone, so no resolver caches a denial.
 */
@Injectable()
export class DnsServerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  private unsubscribe: (() => void) | undefined;

  constructor(
    @Inject(DnsServer) private readonly server: DnsServer,
    @Inject(ZONE_SOURCE) private readonly source: ZoneSource,
    @Inject(DNS_ON_LISTENING) private readonly onListening: DnsModuleOptions['onListening'],
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.server.listen();
    this.onListening?.(this.server);
    this.unsubscribe = this.source.subscribe((zone) => this.server.replaceZone(zone));
  }

  async onApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.server.close();
  }
}

/** The agent-dns Nest module: the DnsServer (exported, for its counters) and its lifecycle. */
@Module({})
export class DnsModule {
  /** Module wired with the listener settings and the process's ZoneSource. */
  static register(options: DnsModuleOptions): DynamicModule {
    return {
      module: DnsModule,
      imports: options.imports ?? [],
      providers: [
        { provide: DNS_SERVER_OPTIONS, useValue: options.server ?? {} },
        { ...options.zoneSource, provide: ZONE_SOURCE },
        { provide: DNS_ON_LISTENING, useValue: options.onListening },
        {
          provide: DnsServer,
          useFactory: (server: DnsServerOptions) => new DnsServer(DnsZone.pending(), server),
          inject: [DNS_SERVER_OPTIONS],
        },
        DnsServerLifecycle,
      ],
      exports: [DnsServer],
    };
  }
}

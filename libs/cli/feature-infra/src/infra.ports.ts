import type { Arch, DependencyManifest, Nat64Kernel } from '@podmin/util-dependencies';
import type { ImageFacts, InstanceTypeFacts, ModuleFile, VpcFacts } from '@podmin/cli-util-infra';
import type { BackendConfig } from '@podmin/cli-data-access-infra-engine';
import type { ObjectStore } from '@podmin/data-access-object-store';
import type { Reporter } from '@podmin/cli-util-io';

/** The read-only provider questions of setup (Ec2Catalog implements it). */
export interface ProviderCatalog {
  availableZones(): Promise<string[]>;
  instanceTypes(names: readonly string[]): Promise<Map<string, InstanceTypeFacts>>;
  debianImages(arch: Arch, owner: string): Promise<ImageFacts[]>;
  vpcsByPrimaryCidr(cidr: string): Promise<VpcFacts[]>;
}

/** OpenTofu/Terraform in the cluster's work directory (InfraEngine implements it). */
export interface Engine {
  readonly executable: string;
  readonly workDir: string;
  version(): Promise<string>;
  init(backend: BackendConfig): Promise<void>;
  plan(planFile: string, options?: { destroy?: boolean }): Promise<boolean>;
  apply(planFile: string): Promise<void>;
  forceUnlock(lockId: string): Promise<void>;
}

/** What every infrastructure flow needs. */
export interface InfraDeps {
  reporter: Reporter;
  cluster: string;
  region: string;
  bucket: string;
  /** The cluster bucket. */
  store: ObjectStore;
  engine: Engine;
  /** The module files to write (the embedded infra/aws). */
  moduleFiles: readonly ModuleFile[];
  /** A custom S3 endpoint for the backend (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL). */
  s3Endpoint?: string;
  /** `-y`: no confirmation questions. */
  assumeYes: boolean;
  /** Whether a person can answer questions (stdin is a TTY). */
  interactive: boolean;
}

/** Setup's own needs beyond {@link InfraDeps}. */
export interface SetupDeps extends InfraDeps {
  catalog: ProviderCatalog;
  /** Owner of the Debian AMIs (136693071363 unless overridden for tests). */
  amiOwner: string;
  /**
   * The exact initial kernel of an official Debian 13 AMI (by name), from Debian's immutable
   * image manifest.
   */
  nat64Kernel(arch: Arch, imageName: string): Promise<Nat64Kernel>;
  /**
   * Publishes the dependency set for the architectures, with the Jool archive of each NAT64
   * kernel (none: no Jool) and, with `otelLogs`, the log export packages (libpq5 and Fluent
   * Bit), and returns the published manifest.
   */
  syncDependencies(
    archs: readonly Arch[],
    nat64Kernels: readonly Nat64Kernel[],
    otelLogs: boolean,
  ): Promise<DependencyManifest>;
  /**
   * The context's default secrets provider: where nodes read the `otel-logs-headers` system
   * secret when `--otel-logs headers-secret=true`.
   */
  secretsProvider: string;
  /** Create-only storage of the workload CA key and the cluster CA. */
  storeSystemSecrets(): Promise<void>;
  /** A new opaque NAT64 launch generation. */
  newGeneration(): string;
}

/** Destroy's own needs beyond {@link InfraDeps}. */
export interface DestroyDeps extends InfraDeps {
  /** Deletes both system secrets permanently (absent is success). */
  deleteSystemSecrets(): Promise<void>;
  /** Deletes the emptied bucket. */
  deleteBucket(): Promise<void>;
  /** Removes the context and its local files. */
  removeContext(): Promise<void>;
}

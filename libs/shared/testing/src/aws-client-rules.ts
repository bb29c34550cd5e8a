/** What {@link expectDualStackUnlessEndpoint} reads of an AWS SDK v3 client. */
export interface AwsSdkClientLike {
  config: {
    useDualstackEndpoint: () => Promise<boolean>;
    endpoint?: () => Promise<{ hostname?: string; port?: number }>;
  };
  destroy: () => void;
}

/** The options of a podmin AWS client factory that the dual-stack rule depends on. */
export interface DualStackOptions {
  region: string;
  dualStack?: boolean;
  endpoint?: string;
}

/**
 * Asserts the dual-stack rule on real SDK clients from `create`: the dual-stack endpoint when
 * asked, not otherwise, and never with a custom endpoint, which the client then uses.
 */
export async function expectDualStackUnlessEndpoint(
  create: (options: DualStackOptions) => AwsSdkClientLike,
): Promise<void> {
  const dual = create({ region: 'eu-west-1', dualStack: true });
  const plain = create({ region: 'eu-west-1' });
  const custom = create({
    region: 'eu-west-1',
    dualStack: true,
    endpoint: 'http://127.0.0.1:4566',
  });
  try {
    expect(await dual.config.useDualstackEndpoint()).toBe(true);
    expect(await plain.config.useDualstackEndpoint()).toBe(false);
    expect(await custom.config.useDualstackEndpoint()).toBe(false);
    expect(await custom.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 4566 });
  } finally {
    dual.destroy();
    plain.destroy();
    custom.destroy();
  }
}

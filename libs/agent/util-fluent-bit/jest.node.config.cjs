// Node tier only (tools/node-tier.sh): the log name mapping against a real kubelet's files.
module.exports = {
  displayName: 'agent-util-fluent-bit (node)',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.node-spec.ts'],
  testTimeout: 60_000,
};

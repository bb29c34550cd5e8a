// Node tier only (tools/node-tier.sh): the readiness watch against a real kubelet.
module.exports = {
  displayName: 'agent-feature-coordinator (node)',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.node-spec.ts'],
  testTimeout: 240_000,
};

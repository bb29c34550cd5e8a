// Node tier only (tools/node-tier.sh): the Pods API client against a real kubelet.
module.exports = {
  displayName: 'agent-data-access-kubelet-pods (node)',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.node-spec.ts'],
  testTimeout: 180_000,
};

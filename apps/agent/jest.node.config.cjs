// Network-namespace tier only (tools/netns-tier.sh, root): agents as nodes in namespaces.
module.exports = {
  displayName: 'agent (netns)',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.node-spec.ts'],
  testTimeout: 240_000,
};

// Chaos tier only (tools/chaos-tier.sh, root): faults on agents in network namespaces.
module.exports = {
  displayName: 'agent (chaos)',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.chaos-spec.ts'],
  testTimeout: 300_000,
};

module.exports = {
  displayName: 'otelcol:integration',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.integration-spec.ts'],
  // A cold build of the collector takes minutes; beforeAll sets its own limit.
  testTimeout: 60000,
};

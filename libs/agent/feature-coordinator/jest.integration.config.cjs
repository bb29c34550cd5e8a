module.exports = {
  displayName: 'agent-feature-coordinator:integration',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.integration-spec.ts'],
  testTimeout: 120000,
};

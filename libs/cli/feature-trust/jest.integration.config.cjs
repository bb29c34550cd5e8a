module.exports = {
  displayName: 'cli-feature-trust:integration',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.integration-spec.ts'],
  testTimeout: 60000,
};

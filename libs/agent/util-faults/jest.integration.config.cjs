module.exports = {
  displayName: 'agent-util-faults:integration',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.integration-spec.ts'],
  testTimeout: 60000,
};

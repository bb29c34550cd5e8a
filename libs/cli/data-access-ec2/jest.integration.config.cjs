module.exports = {
  displayName: 'cli-data-access-ec2:integration',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.integration-spec.ts'],
  testTimeout: 60000,
};

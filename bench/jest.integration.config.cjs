module.exports = {
  displayName: 'bench:integration',
  preset: '../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/**/*.integration-spec.ts'],
  testTimeout: 180000,
};

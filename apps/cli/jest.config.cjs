module.exports = {
  displayName: 'cli',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};

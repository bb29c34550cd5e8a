module.exports = {
  displayName: 'agent',
  preset: '../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};

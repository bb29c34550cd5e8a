module.exports = {
  displayName: 'util-names',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};

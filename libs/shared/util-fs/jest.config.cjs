module.exports = {
  displayName: 'util-fs',
  preset: '../../../jest.preset.cjs',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};

// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const ICU = 'Locale-aware formatting loads ICU data (about 5 MB resident); use plain formatting, or compareText (src/shared/compare-text.ts) to sort.';

/** What assembles the features: imported by nothing below it. */
const ABOVE_FEATURES = ['**/commands/**', '**/services/**', '**/wiring.js', '**/app.js', '**/main.js'];

export default tseslint.config(
  { ignores: ['dist/**', 'data/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      // Fastify route handlers are async by contract even when they do not await.
      '@typescript-eslint/require-await': 'off',
      'no-console': ['error', { allow: ['error'] }],
      // The first locale-aware call maps ICU's data into the process: about 5 MB of resident
      // memory for good (docs/benchmarks.md, lean). The server formats for machines, not locales.
      'no-restricted-properties': [
        'error',
        ...['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString', 'toLocaleUpperCase', 'toLocaleLowerCase', 'localeCompare'].map((property) => ({ property, message: ICU })),
      ],
      'no-restricted-globals': ['error', { name: 'Intl', message: ICU }],
    },
  },
  // A source file past 500 lines holds more than one use case: split it along them (#37).
  { files: ['src/**/*.ts'], ignores: ['**/*.test.ts'], rules: { 'max-lines': ['error', { max: 500 }] } },
  // The floors of the house (docs/architecture.md): each floor imports only the floors below it.
  // platform/ is what every feature shares, so it imports no feature; features import no command,
  // service mount or wiring; the framework's edges (http, db, config, tls, shared) import none of them.
  {
    files: ['src/http/**/*.ts', 'src/db/**/*.ts', 'src/config/**/*.ts', 'src/tls/**/*.ts', 'src/shared/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/platform/**', '**/features/**', ...ABOVE_FEATURES], message: 'The framework edges sit below the platform and the features (docs/architecture.md, Floors).' }] }] },
  },
  {
    files: ['src/platform/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/features/**', ...ABOVE_FEATURES], message: 'platform/ is shared by every feature and imports none (docs/architecture.md, Floors).' }] }] },
  },
  {
    files: ['src/features/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ABOVE_FEATURES, message: 'Features import no command, service mount or wiring: those assemble the features (docs/architecture.md, Floors).' }] }] },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'fleet/**/*.ts'],
    rules: {
      'no-console': 'off',
      'no-restricted-properties': 'off',
      'no-restricted-globals': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  // Plain JavaScript run by npm before anything is built: checked without type information.
  { files: ['eslint.config.js', 'scripts/**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['scripts/**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } } },
  // Module hooks preloaded into a program under test (plain JavaScript: they run before tsx).
  { files: ['test/support/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['test/support/*.mjs'], languageOptions: { globals: { process: 'readonly' } }, rules: { 'no-restricted-properties': 'off', 'no-restricted-globals': 'off' } },
);

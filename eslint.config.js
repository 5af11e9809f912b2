import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';

// The layers of src/ and what each may import (docs/architecture.md explains them):
//   core      — the domain; imports only core and config.ts.
//   contract  — the interface every surface shares; imports core and config.ts.
//   http, mcp, download — adapters; import core and contract, never each other.
//   cli, server.ts — composition roots; may import any layer, nothing imports them.
const ADAPTERS = ['./src/http', './src/mcp', './src/download'];
const ROOTS = ['./src/cli', './src/server.ts'];
const layer = (target, from, message) => ({ target, from, message });

export default tseslint.config(
  { ignores: ['node_modules/**', '.cache/**', 'coverage/**', 'scratch/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', __dirname: 'readonly', module: 'writable', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'] })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      // A runtime import cycle (type-only imports do not count) makes load order matter.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            layer('./src/core', ['./src/contract', ...ADAPTERS, ...ROOTS], 'core knows nothing of the contract, the adapters or the entry points.'),
            layer('./src/contract', [...ADAPTERS, ...ROOTS], 'the contract is shared by the adapters: it imports none of them.'),
            layer('./src/http', ['./src/mcp', './src/download', ...ROOTS], 'adapters never import each other: share through core or the contract.'),
            layer('./src/mcp', ['./src/http', './src/download', ...ROOTS], 'adapters never import each other: share through core or the contract.'),
            layer('./src/download', ['./src/http', './src/mcp', ...ROOTS], 'adapters never import each other: share through core or the contract.'),
            {
              target: './src/download',
              from: './src/core',
              except: ['./rules', './data/manifest.ts', './errors.ts', './suggest.ts', './capabilities.ts'],
              message: 'the downloader loads no engine: it may use only the engine-free parts of core.',
            },
            layer('./src/config.ts', ['./src/core', './src/contract', ...ADAPTERS, ...ROOTS], 'configuration depends on nothing.'),
          ],
        },
      ],
    },
  },
);

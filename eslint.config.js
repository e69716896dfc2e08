// ESLint flat config: typescript-eslint's recommended rules over every package.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.sandboxd/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Clones of one snapshot share the agent's memory, so a generator seeded in it hands every clone the same
    // values: the agent draws from the kernel instead (packages/agent/src/system/kernel-random.ts).
    files: ['packages/agent/src/**/*.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Use kernelRandomBytes (system/kernel-random.ts): clones share Math.random\'s state.' }],
      'no-restricted-globals': ['error', { name: 'crypto', message: 'Use kernelRandomBytes (system/kernel-random.ts): clones share OpenSSL\'s generator state.' }],
      'no-restricted-imports': [
        'error',
        ...['node:crypto', 'crypto'].map((name) => ({
          name,
          importNames: ['randomBytes', 'randomUUID', 'randomInt', 'randomFill', 'randomFillSync', 'getRandomValues', 'webcrypto'],
          message: 'Use kernelRandomBytes (system/kernel-random.ts): clones share OpenSSL\'s generator state.',
        })),
      ],
    },
  },
  {
    // Tests read untyped JSON responses; typing every body would add noise, not safety.
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Preact's JSX through Vite's own transform: no framework plugin (and no Babel) is needed to build.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/_/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Every browser the console supports has module preload; the polyfill would be dead weight.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: {
    // `npx vite dashboard` during development: the API of a Cairn running on the default port.
    proxy: { '/api': 'http://127.0.0.1:8090' },
  },
});

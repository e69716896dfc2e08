// Builds the console into dist/ (served by the server at /, packages/server/src/api/dashboard/serve.ts).
// `npm run dev -w @sandboxd/dashboard` would need a proxy to a running server; the build is what ships.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The server's Content-Security-Policy allows no inline script: keep the module preload polyfill out.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    manifest: true,
    // Two pages: the console, and the desktop viewer the server answers viewer links with
    // (packages/server/src/api/preview/desktop-viewer-page.ts); they share noVNC's chunk.
    rolldownOptions: { input: { index: 'index.html', viewer: 'viewer.html' } },
  },
});

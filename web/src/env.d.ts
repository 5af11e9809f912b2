// Module kinds the bundler handles that TypeScript does not know: stylesheets
// imported for their side effect (esbuild emits them as the app's CSS file).
declare module '*.css';

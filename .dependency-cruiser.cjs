// The module graph of src/, checked by `npm run lint` (depcruise): no runtime
// import cycle, and the layer rules of docs/architecture.md.
//   core      — the domain; imports only core and config.ts.
//   contract  — the interface every surface shares; imports core and config.ts.
//   http, mcp, download — adapters; import core and contract, never each other.
//   cli, server.ts — composition roots; may import any layer, nothing imports them.

const ADAPTERS = '^src/(http|mcp|download)/';
const ROOTS = '^src/(cli/|server[.]ts$)';

/** A forbidden edge from the modules matching `from` to those matching `to`. */
const rule = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } });

module.exports = {
  forbidden: [
    {
      name: 'no-runtime-cycle',
      comment: 'A runtime import cycle makes load order matter. Type-only imports do not count.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    rule('core-is-the-bottom', 'core knows nothing of the contract, the adapters or the entry points.', '^src/core/', `^src/contract/|${ADAPTERS}|${ROOTS}`),
    rule('contract-below-adapters', 'the contract is shared by the adapters: it imports none of them.', '^src/contract/', `${ADAPTERS}|${ROOTS}`),
    rule('http-alone', 'adapters never import each other: share through core or the contract.', '^src/http/', `^src/(mcp|download)/|${ROOTS}`),
    rule('mcp-alone', 'adapters never import each other: share through core or the contract.', '^src/mcp/', `^src/(http|download)/|${ROOTS}`),
    rule('download-alone', 'adapters never import each other: share through core or the contract.', '^src/download/', `^src/(http|mcp)/|${ROOTS}`),
    {
      name: 'download-loads-no-engine',
      comment: 'the downloader loads no engine: of core it may use only the engine-free parts.',
      severity: 'error',
      from: { path: '^src/download/' },
      to: { path: '^src/core/', pathNot: '^src/core/(rules/|data/manifest[.]ts$|errors[.]ts$|suggest[.]ts$|capabilities[.]ts$|s3[.]ts$)' },
    },
    rule('config-depends-on-nothing', 'configuration depends on nothing of src/ but the did-you-mean rule, a leaf.', '^src/config[.]ts$', '^src/(?!core/suggest[.]ts$)'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are seen (as type-only), so layer rules apply to them too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};

// node:http and node:https for the fetchers (releases, S3), loaded with
// require: an ES import of node:http builds its module facade, which reads
// every export and so loads the lazily-loaded undici behind some of them
// (about 25 ms of every start, of a server that may never fetch anything).

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const http = require('node:http') as typeof import('node:http');
export const https = require('node:https') as typeof import('node:https');

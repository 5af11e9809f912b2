// Baseline for bench:api: a bare Fastify server answering the same version
// JSON with no hooks, headers or logging — the ceiling of this machine.
import Fastify from 'fastify';

const app = Fastify();
const body = JSON.parse(process.argv[3] ?? '{}');
app.get('/v3/version', async () => body);
await app.listen({ port: Number(process.argv[2]), host: '127.0.0.1' });

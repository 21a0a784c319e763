import { startServer, type StartOptions, type TestServer } from './server.ts';

/** Several Cairn servers on one PostgreSQL database: one instance of several nodes (API contract §13). */
export interface TestNodes {
  nodes: TestServer[];
  close(): Promise<void>;
}

/**
 * Starts `count` servers sharing the first one's CAIRN_DATABASE_URL (each with its own data
 * directory, as separate machines would have). Only meaningful on the PostgreSQL pass: on SQLite each
 * server has its own files. The first server owns the database and drops it when closed, last.
 */
export async function startNodes(count: number, options: StartOptions = {}): Promise<TestNodes> {
  const nodes: TestServer[] = [];
  const close = async () => {
    for (const node of nodes.reverse()) await node.close();
  };
  try {
    const first = await startServer({ ...options, env: { CAIRN_NODE_ID: 'node-1', ...options.env } });
    nodes.push(first);
    const databaseUrl = first.services.config.databaseUrl;
    if (!databaseUrl) throw new Error('startNodes needs PostgreSQL: run it on the PostgreSQL pass (skipOn("sqlite", …))');
    for (let i = 2; i <= count; i++) {
      nodes.push(await startServer({ ...options, env: { ...options.env, CAIRN_DATABASE_URL: databaseUrl, CAIRN_PG_POOL_SIZE: '4', CAIRN_NODE_ID: `node-${i}` } }));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { nodes: [...nodes], close };
}

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type SpawnedServer, spawnServer } from '../helpers/process.ts';

const CLIENTS = 1000;
const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));

/**
 * 1,000 clients connecting at once must all be queued by the kernel until the server accepts them:
 * with Node's default backlog (511) the rest were dropped and their clients retried a second later.
 * The server is stopped (SIGSTOP) while they connect, so nothing is accepted meanwhile and the
 * kernel's queue alone must hold them all.
 */
describe('the listen backlog', { skip: somaxconn < CLIENTS ? `net.core.somaxconn is ${somaxconn}` : false }, () => {
  let dir: string;
  let server: SpawnedServer;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-backlog-'));
    server = await spawnServer(dir);
  });
  after(async () => {
    server.child.kill('SIGCONT');
    await server.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test(`${CLIENTS} connections at once are all queued while the server accepts none`, async () => {
    server.child.kill('SIGSTOP');
    const sockets: net.Socket[] = [];
    try {
      let connected = 0;
      const all = new Promise<void>((resolve) => {
        for (let i = 0; i < CLIENTS; i++) {
          const socket = net.connect(server.port, '127.0.0.1', () => {
            if (++connected === CLIENTS) resolve();
          });
          socket.on('error', () => {});
          sockets.push(socket);
        }
      });
      // A dropped connection is retried by the kernel after a second, and dropped again while the
      // server is stopped: waiting 2.5 s tells queued from dropped.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2500)))]);
      clearTimeout(timer);
      assert.equal(connected, CLIENTS);
    } finally {
      for (const s of sockets) s.destroy();
      server.child.kill('SIGCONT');
    }
    const health = await fetch(`${server.url}/api/health`);
    assert.equal(health.status, 200);
  });
});

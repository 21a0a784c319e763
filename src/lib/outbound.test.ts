// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import type { lookup } from 'node:dns';
import { connect, createServer } from 'node:net';
import { test } from 'node:test';
import { OutboundPolicy } from './outbound.ts';

/** A resolver answering every name with `addresses` (the sandbox has no DNS to point a name at 169.254.x). */
function resolvingTo(...addresses: string[]): typeof lookup {
  return ((_host: string, _opts: unknown, cb: (err: null, list: { address: string; family: number }[]) => void) =>
    cb(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )) as unknown as typeof lookup;
}

test('addresses: link-local and metadata refused, loopback and private ranges allowed', () => {
  const p = new OutboundPolicy();
  for (const a of ['169.254.169.254', '169.254.0.1', 'fe80::1', '::ffff:169.254.169.254', '100.100.100.200', 'fd00:ec2::254']) assert.ok(p.refusedAddress(a), a);
  for (const a of ['127.0.0.1', '::1', '10.0.0.1', '192.168.1.1', '172.16.0.1', '93.184.216.34']) assert.equal(p.refusedAddress(a), undefined, a);
  for (const h of ['metadata.google.internal', 'METADATA.google.internal.', '[fe80::1]', '169.254.169.254']) assert.ok(p.refusedHost(h), h);
  assert.equal(p.refusedHost('example.com'), undefined);
});

test('CAIRN_OUTBOUND_ALLOW lets listed addresses, ranges and names through', () => {
  const p = new OutboundPolicy(['169.254.10.0/24', 'fe80::1', 'metadata.google.internal']);
  assert.equal(p.refusedAddress('169.254.10.7'), undefined);
  assert.ok(p.refusedAddress('169.254.169.254'));
  assert.equal(p.refusedAddress('fe80::1'), undefined);
  assert.equal(p.refusedHost('metadata.google.internal'), undefined);
});

test('a name is checked after resolution: one resolving to a link-local address is refused when connecting', async () => {
  const server = createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const attempt = (policy: OutboundPolicy) =>
    new Promise<string>((resolve) => {
      const socket = connect({ host: 'innocent.example', port, lookup: policy.lookup as never });
      socket.on('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
  try {
    assert.equal(await attempt(new OutboundPolicy([], resolvingTo('169.254.169.254'))), 'ERR_OUTBOUND_REFUSED');
    assert.equal(await attempt(new OutboundPolicy([], resolvingTo('127.0.0.1', '169.254.169.254'))), 'ERR_OUTBOUND_REFUSED');
    assert.equal(await attempt(new OutboundPolicy([], resolvingTo('127.0.0.1'))), 'connected');
  } finally {
    server.close();
  }
});

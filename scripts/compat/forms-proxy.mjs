#!/usr/bin/env node
// A diagnostic stand-in for fixes, to see a client's failures past the first one: a proxy in front
// of Cairn that turns a sign-in sent as a form (multipart or urlencoded) into JSON, and with
// --sort-record-keys writes the records of JSON answers under /records with their keys sorted (as
// PocketBase's encoder does), and with --strip-field-keys KEY,… drops those keys from the field
// objects of `fields` in collection answers. Everything else passes through untouched. A run through it is labelled
// so in the report; it is never the measurement of main itself.
//
//   node scripts/compat/forms-proxy.mjs --listen 8090 --target 8091 [--sort-record-keys] [--strip-field-keys KEY,…] -- command args...

import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { parseArgs } from 'node:util';

const sep = process.argv.indexOf('--');
const { values: opts } = parseArgs({
  args: process.argv.slice(2, sep < 0 ? undefined : sep),
  options: {
    listen: { type: 'string', default: '8090' },
    target: { type: 'string', default: '8091' },
    'sort-record-keys': { type: 'boolean', default: false },
    'strip-field-keys': { type: 'string', default: '' },
  },
});
const command = sep < 0 ? [] : process.argv.slice(sep + 1);
const SIGN_IN = /\/auth-with-password\/?(\?.*)?$/;
const COLLECTIONS = /^\/api\/collections(\/[^/?]+)?\/?(\?.*)?$/;
const RECORDS = /^\/api\/collections\/[^/]+\/records(\/[^/?]+)?\/?(\?.*)?$/;

function stripFields(collection) {
  if (!collection || !Array.isArray(collection.fields)) return collection;
  const drop = new Set(opts['strip-field-keys'].split(','));
  return { ...collection, fields: collection.fields.map((f) => Object.fromEntries(Object.entries(f).filter(([k]) => !drop.has(k)))) };
}

function sortRecord(record) {
  const out = {};
  for (const key of Object.keys(record).sort()) {
    const v = record[key];
    out[key] = key === 'expand' && v && typeof v === 'object' ? sortExpand(v) : v;
  }
  return out;
}

function sortExpand(expand) {
  const out = {};
  for (const [k, v] of Object.entries(expand)) out[k] = Array.isArray(v) ? v.map(sortRecord) : v && typeof v === 'object' ? sortRecord(v) : v;
  return out;
}

const server = createServer(async (req, res) => {
  const type = req.headers['content-type'] ?? '';
  const headers = { ...req.headers, host: `127.0.0.1:${opts.target}` };
  // answers this proxy rewrites must come back uncompressed
  if ((opts['sort-record-keys'] && RECORDS.test(req.url)) || (opts['strip-field-keys'] && COLLECTIONS.test(req.url))) delete headers['accept-encoding'];
  let body = null;
  if (req.method === 'POST' && SIGN_IN.test(req.url) && /multipart\/form-data|x-www-form-urlencoded/.test(type)) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': type } }).formData();
    body = Buffer.from(JSON.stringify(Object.fromEntries(form.entries())));
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(body.length);
    delete headers['transfer-encoding'];
  }
  const up = request({ host: '127.0.0.1', port: opts.target, method: req.method, path: req.url, headers }, async (r) => {
    const json = r.statusCode < 300 && /json/.test(r.headers['content-type'] ?? '');
    const sortKeys = opts['sort-record-keys'] && RECORDS.test(req.url);
    const strip = opts['strip-field-keys'] && COLLECTIONS.test(req.url);
    if (!json || !(sortKeys || strip)) {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
      return;
    }
    const chunks = [];
    for await (const c of r) chunks.push(c);
    const data = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const each = sortKeys ? sortRecord : stripFields;
    const sorted = Array.isArray(data.items) ? { ...data, items: data.items.map(each) } : each(data);
    const out = Buffer.from(JSON.stringify(sorted));
    const { 'content-length': _, 'transfer-encoding': __, ...rest } = r.headers;
    res.writeHead(r.statusCode, { ...rest, 'content-length': String(out.length) });
    res.end(out);
  });
  up.on('error', () => {
    res.writeHead(502);
    res.end();
  });
  if (body) up.end(body);
  else req.pipe(up);
});
server.listen(Number(opts.listen), '::', () => {
  if (!command.length) return;
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  child.on('exit', (code) => {
    server.close();
    process.exit(code ?? 1);
  });
});

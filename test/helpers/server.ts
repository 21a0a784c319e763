import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { App, Services } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { Host, type HostOptions } from '../../src/http/host.ts';
import { driverEnv, dropDatabaseFor, onPostgres } from './postgres.ts';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'admin-password-1';

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** A raw body sent as is (no JSON encoding). */
  raw?: string | Buffer | Uint8Array | FormData;
  token?: string | null;
  db?: string;
  headers?: Record<string, string>;
}

/** A real Cairn server on 127.0.0.1 with its own temporary data directory. */
export interface TestServer {
  url: string;
  dir: string;
  /** The services and app serving now (a restore replaces them). */
  services: Services;
  app: App['app'];
  host: Host;
  /** Token of the administrator every test server starts with. */
  adminToken: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>>;
  /** Shorthand for requests as the administrator. */
  admin<T = any>(method: string, path: string, options?: Omit<RequestOptions, 'token'>): Promise<Reply<T>>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** CAIRN_* variables for this server. */
  env?: Record<string, string>;
  /** Reuse a data directory (for restart tests); it is then not deleted on close. */
  dir?: string;
  /** Skip creating the administrator. */
  noAdmin?: boolean;
  /** What runs pb_migrations files (with CAIRN_PB_MIGRATIONS_DIR set in `env`). */
  pbMigrations?: HostOptions['pbMigrations'];
}

/** Mail stays in `<dir>/mail` whether or not the machine has a sendmail (tests read it there). */
export function testConfig(dir: string, env: Record<string, string> = {}): Config {
  return loadConfig({ dir, port: 0, host: '127.0.0.1' }, { CAIRN_LOG_LEVEL: 'silent', CAIRN_RATE_LIMIT: 'off', CAIRN_HOOKS_DIR: 'off', CAIRN_PB_HOOKS_DIR: 'off', CAIRN_PB_MIGRATIONS_DIR: 'off', CAIRN_PUBLIC_DIR: 'off', CAIRN_DRAIN_MS: '0', CAIRN_MAIL_DIR: path.join(dir, 'mail'), ...env });
}

export async function request<T = any>(baseUrl: string, method: string, urlPath: string, options: RequestOptions = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.db) headers['x-dbname'] = options.db;
  let body: BodyInit | undefined;
  if (options.raw !== undefined) body = options.raw as BodyInit;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + urlPath, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('application/json') && text !== '') parsed = JSON.parse(text);
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'cairn-test-'));
  const env = { ...(await driverEnv(dir)), ...options.env };
  const host = await Host.start(testConfig(dir, env), { pbMigrations: options.pbMigrations });
  const url = `http://127.0.0.1:${host.port}`;

  let adminToken = '';
  if (!options.noAdmin) {
    if ((await host.services.admins.count()) === 0) await host.services.admins.create({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const login = await request(url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    if (login.status !== 200) throw new Error(`admin login failed: ${login.text}`);
    adminToken = login.body.token;
  }

  const server: TestServer = {
    url,
    dir,
    get services() {
      return host.services;
    },
    get app() {
      return host.app;
    },
    host,
    adminToken,
    request: (method, p, o) => request(url, method, p, o),
    admin: (method, p, o) => request(url, method, p, { ...o, token: adminToken }),
    async close() {
      await host.close();
      if (ownDir) {
        rmSync(dir, { recursive: true, force: true });
        if (onPostgres && !options.env?.CAIRN_DATABASE_URL) await dropDatabaseFor(dir);
      }
    },
  };
  return server;
}

/** Creates a collection as the administrator and fails loudly if that does not work. */
export async function createCollection(server: TestServer, body: Record<string, unknown>, db?: string): Promise<any> {
  const res = await server.admin('POST', '/api/collections', { body, db });
  if (res.status !== 200) throw new Error(`creating collection failed (${res.status}): ${res.text}`);
  return res.body;
}

/** Registers a user through the API and signs them in; returns the token and record. */
export async function createUser(server: TestServer, email: string, password = 'user-password-1', extra: Record<string, unknown> = {}, db?: string) {
  const reg = await server.request('POST', '/api/auth/register', { body: { email, password, passwordConfirm: password, ...extra }, db });
  if (reg.status !== 200) throw new Error(`register failed (${reg.status}): ${reg.text}`);
  const login = await server.request('POST', '/api/auth/login', { body: { email, password }, db });
  if (login.status !== 200) throw new Error(`login failed (${login.status}): ${login.text}`);
  return { token: login.body.token as string, user: login.body.user as Record<string, any>, id: login.body.user.id as string };
}

import { OAuth2Server } from 'oauth2-mock-server';

/** A real OAuth2/OIDC provider on 127.0.0.1 (oauth2-mock-server) whose user info the test sets. */
export interface Provider {
  url: string;
  server: OAuth2Server;
  /** What the user-info endpoint answers from now on. */
  user: Record<string, unknown>;
  /** Settings for Cairn's `oauth2.providers` pointing here. */
  settings(name?: string): Record<string, unknown>;
  /** Follows the authorization URL as a browser would and returns the code and state it redirects with. */
  authorize(authUrl: string): Promise<{ code: string; state: string }>;
  close(): Promise<void>;
}

export async function startProvider(): Promise<Provider> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const url = server.issuer.url!.replace(/\/$/, '');
  const provider: Provider = {
    url,
    server,
    user: { sub: 'johndoe' },
    settings: (name = 'mock') => ({
      name,
      displayName: 'Mock ID',
      clientId: 'cairn-client',
      clientSecret: 'cairn-client-secret',
      authUrl: `${url}/authorize`,
      tokenUrl: `${url}/token`,
      userInfoUrl: `${url}/userinfo`,
      scopes: ['openid', 'email', 'profile'],
    }),
    async authorize(authUrl) {
      const res = await fetch(authUrl, { redirect: 'manual' });
      const location = res.headers.get('location');
      if (res.status !== 302 || !location) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
      const back = new URL(location);
      return { code: back.searchParams.get('code') ?? '', state: back.searchParams.get('state') ?? '' };
    },
    close: () => server.stop(),
  };
  server.service.on('beforeUserinfo', (res: { body: unknown }) => {
    res.body = provider.user;
  });
  return provider;
}

/** Makes `provider` the server's one OAuth2 provider (instance-wide settings), as the OAuth2 tests start. */
export async function useProvider(
  server: { admin(method: string, path: string, options: { body: unknown }): Promise<{ status: number; text: string }> },
  provider: Provider,
): Promise<void> {
  const res = await server.admin('PATCH', '/api/settings', { body: { oauth2: { providers: [provider.settings()] } } });
  if (res.status !== 200) throw new Error(`saving the OAuth2 provider failed (${res.status}): ${res.text}`);
}

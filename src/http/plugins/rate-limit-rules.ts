import type { FastifyRequest } from 'fastify';

/** One rule of PocketBase's `rateLimits` settings. */
export interface RateLimitRule {
  /** `/api/` (a path prefix), `POST /api/x` (method and path), `users:auth`, `*:create`. */
  label: string;
  /** `''` everyone, `@guest` callers without a token, `@auth` callers with one. */
  audience: string;
  /** Window in seconds. */
  duration: number;
  maxRequests: number;
}

/** PocketBase's `rateLimits` settings section. */
export interface RateLimitSettings {
  enabled: boolean;
  rules: RateLimitRule[];
  excludedIPs: string[];
}

const AUTH_ACTIONS: Record<string, string> = {
  'auth-with-password': 'auth',
  'auth-with-oauth2': 'auth',
  'auth-with-otp': 'auth',
  'auth-refresh': 'authRefresh',
  'auth-methods': 'listAuthMethods',
  'request-otp': 'requestOTP',
  'request-password-reset': 'requestPasswordReset',
  'confirm-password-reset': 'confirmPasswordReset',
  'request-verification': 'requestVerification',
  'confirm-verification': 'confirmVerification',
  'request-email-change': 'requestEmailChange',
  'confirm-email-change': 'confirmEmailChange',
};

/** PocketBase's tag for a collection route (`list`, `create`, `auth`, …), or undefined for other routes. */
export function actionOf(method: string, routeUrl: string): string | undefined {
  const m = /^\/api\/collections\/:collection\/(records(\/:id)?|[a-z-]+)$/.exec(routeUrl);
  if (!m) return undefined;
  if (m[1] === 'records') return method === 'GET' ? 'list' : method === 'POST' ? 'create' : undefined;
  if (m[2]) return method === 'GET' ? 'view' : method === 'PATCH' ? 'update' : method === 'DELETE' ? 'delete' : undefined;
  return AUTH_ACTIONS[m[1]];
}

/**
 * The rule for a request, as PocketBase picks it: a tag (`<collection>:<action>`, then `*:<action>`),
 * then `METHOD /path` and `/path` exactly, then the longest path prefix (a label ending in `/`), the
 * method-bound one first. Within a label a rule for the caller's audience wins over one for everyone.
 */
export function findRule(rules: readonly RateLimitRule[], req: { method: string; path: string; collection?: string; action?: string; authenticated: boolean }): RateLimitRule | undefined {
  const audience = req.authenticated ? '@auth' : '@guest';
  const fits = (r: RateLimitRule) => r.audience === '' || r.audience === audience;
  const exact = (label: string) => rules.find((r) => r.label === label && r.audience === audience) ?? rules.find((r) => r.label === label && r.audience === '');
  const labels: string[] = [];
  if (req.action) {
    if (req.collection) labels.push(`${req.collection}:${req.action}`);
    labels.push(`*:${req.action}`);
  }
  labels.push(`${req.method} ${req.path}`, req.path);
  for (const label of labels) {
    const rule = exact(label);
    if (rule) return rule;
  }
  let best: { rule: RateLimitRule; score: number } | undefined;
  for (const rule of rules) {
    if (!rule.label.endsWith('/') || !fits(rule)) continue;
    const space = rule.label.indexOf(' ');
    const method = space < 0 ? undefined : rule.label.slice(0, space);
    const prefix = space < 0 ? rule.label : rule.label.slice(space + 1);
    if ((method !== undefined && method !== req.method) || !`${req.path}/`.startsWith(prefix)) continue;
    const score = prefix.length * 4 + (method ? 2 : 0) + (rule.audience === '' ? 0 : 1);
    if (!best || score > best.score) best = { rule, score };
  }
  return best?.rule;
}

/** The request as rules are matched against it. */
export function ruleRequest(req: FastifyRequest): { method: string; path: string; collection?: string; action?: string; authenticated: boolean } {
  const url = req.url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const routeUrl = req.routeOptions.url ?? '';
  const action = actionOf(req.method, routeUrl);
  const collection = action ? (req.params as { collection?: string } | undefined)?.collection : undefined;
  // Audience by the token's presence: a token that does not verify is refused with a 401 anyway.
  return { method: req.method, path, collection, action, authenticated: req.headers.authorization !== undefined && req.headers.authorization !== '' };
}

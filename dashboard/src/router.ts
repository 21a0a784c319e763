import { useEffect, useState } from 'preact/hooks';

// Hash routes (`/_/#/collections/posts`): the server needs no route of its own for each page, and
// the links in Cairn's mails (`/_/#/auth/confirm-…`) reach the page they name.

export interface Route {
  path: string;
  query: URLSearchParams;
}

function current(): Route {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, search = ''] = hash.split('?');
  return { path: path || '/', query: new URLSearchParams(search) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export function navigate(path: string, replace = false): void {
  const target = `#${path}`;
  if (replace) history.replaceState(null, '', target);
  if (replace || location.hash === target) dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = target;
}

/** `match('/collections/:name', '/collections/posts')` → `{name: 'posts'}`; undefined when it differs. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/');
  const s = path.split('/');
  if (p.length !== s.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) {
      try {
        params[p[i].slice(1)] = decodeURIComponent(s[i]);
      } catch {
        return undefined;
      }
    } else if (p[i] !== s[i]) return undefined;
  }
  return params;
}

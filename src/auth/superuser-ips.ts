import { forbidden } from '../errors.ts';
import { ipListMatcher } from '../lib/ip-list.ts';

/**
 * PocketBase's superuser IP whitelist (the `superuserIPs` setting): when it holds addresses or
 * subnets, an administrator is served only from them. Checked where an administrator is recognised:
 * a request's token (src/auth/authenticate.ts), a sign-in (before the token is given), a file token
 * (a protected file, a backup download). The client's address is the one the trusted-proxy settings
 * give (`req.ip`).
 */
export class SuperuserIps {
  private readonly matches = ipListMatcher();

  constructor(
    /** The setting's current value; undefined until the settings are loaded (nothing restricted). */
    private readonly list: () => readonly string[] | undefined,
  ) {}

  allows(ip: string): boolean {
    const list = this.list();
    return list === undefined || list.length === 0 || this.matches(list, ip);
  }

  /** PocketBase's 403 for an administrator from elsewhere. */
  check(ip: string): void {
    if (!this.allows(ip)) throw forbidden();
  }
}

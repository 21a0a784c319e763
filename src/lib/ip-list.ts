import { BlockList, isIP } from 'node:net';

/**
 * Lists of addresses and CIDR subnets, as PocketBase's settings hold them (`rateLimits.excludedIPs`,
 * `superuserIPs`), and the test of a client's address against one.
 */

/** An IP address or a CIDR subnet. */
export function isIpOrSubnet(value: string): boolean {
  const [ip, bits, extra] = value.split('/');
  if (extra !== undefined) return false;
  const v4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(ip) && ip.split('.').every((p) => Number(p) <= 255);
  const v6 = !v4 && /^[0-9a-f:.]+$/i.test(ip) && ip.includes(':');
  if (!v4 && !v6) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (v4 ? 32 : 128));
}

/** An IPv4 client seen through an IPv6 socket (`::ffff:10.0.0.1`) as the IPv4 address a list names. */
function plain(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

/** Whether `ip` is in `list` (addresses or CIDR subnets); a list is compiled once per value it has. */
export function ipListMatcher(): (list: readonly string[], ip: string) => boolean {
  let cached: { key: string; list: BlockList } | undefined;
  return (entries, ip) => {
    if (entries.length === 0) return false;
    const key = entries.join('\n');
    if (cached?.key !== key) {
      const list = new BlockList();
      for (const entry of entries) {
        const [address, bits] = entry.split('/');
        const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
        if (isIP(address) === 0) continue;
        if (bits === undefined) list.addAddress(address, type);
        else list.addSubnet(address, Number(bits), type);
      }
      cached = { key, list };
    }
    const address = plain(ip);
    const v = isIP(address);
    if (v === 0) return false;
    return cached.list.check(address, v === 6 ? 'ipv6' : 'ipv4');
  };
}

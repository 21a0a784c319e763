import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where Cairn's outbound requests (webhook triggers, workflow steps, cron deliveries) may not go
 * (API contract §20): link-local addresses, where clouds serve instance metadata and credentials
 * (`169.254.0.0/16`, `fe80::/10`), and the metadata services' other names and addresses. Loopback and
 * private ranges stay allowed: self-hosted setups deliver to services beside them. The address is
 * checked after DNS resolution, when each connection is made, so a name that resolves to a refused
 * address (or starts to, DNS rebinding) is refused too. `CAIRN_OUTBOUND_ALLOW` lists exceptions
 * (addresses, CIDR ranges or host names).
 */

const REFUSED_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

function refusedRanges(): BlockList {
  const list = new BlockList();
  list.addSubnet('169.254.0.0', 16, 'ipv4');
  list.addSubnet('fe80::', 10, 'ipv6');
  // Alibaba Cloud's metadata service, and AWS's over IPv6.
  list.addAddress('100.100.100.200', 'ipv4');
  list.addAddress('fd00:ec2::254', 'ipv6');
  return list;
}

const REFUSED = refusedRanges();

export class OutboundPolicy {
  private readonly allowedHosts = new Set<string>();
  private readonly allowed = new BlockList();

  /**
   * `allow`: CAIRN_OUTBOUND_ALLOW's entries (addresses, `address/bits` ranges, host names);
   * `resolve`: how names become addresses (`dns.lookup`, replaced in tests that need a name resolving
   * to a refused address).
   */
  constructor(
    allow: readonly string[] = [],
    private readonly resolve: typeof dnsLookup = dnsLookup,
  ) {
    for (const entry of allow) {
      const [address, bits] = entry.split('/');
      const family = isIP(address);
      if (family === 0) this.allowedHosts.add(entry.toLowerCase());
      else if (bits === undefined) this.allowed.addAddress(address, family === 4 ? 'ipv4' : 'ipv6');
      else this.allowed.addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Why a connection to host name `host` is refused before resolving it, or undefined. */
  refusedHost(host: string): string | undefined {
    const name = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
    if (this.allowedHosts.has(name)) return undefined;
    if (REFUSED_HOSTS.has(name)) return `${name} is a cloud metadata address; outbound requests may not reach it (CAIRN_OUTBOUND_ALLOW).`;
    if (isIP(name) !== 0) return this.refusedAddress(name);
    return undefined;
  }

  /** Why a connection to resolved `address` is refused, or undefined. */
  refusedAddress(address: string): string | undefined {
    let a = address.replace(/^\[|\]$/g, '');
    let family = isIP(a);
    if (family === 0) return undefined;
    // An IPv4 address written as IPv6 (`::ffff:169.254.169.254`) is the IPv4 address.
    const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a) : null;
    if (mapped) {
      a = mapped[1];
      family = 4;
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.allowed.check(a, type)) return undefined;
    if (REFUSED.check(a, type)) return `${a} is a link-local or cloud metadata address; outbound requests may not reach it (CAIRN_OUTBOUND_ALLOW).`;
    return undefined;
  }

  /**
   * A `lookup` for `net.connect` (and undici's `connect` options): resolves as `dns.lookup` does and
   * fails with `ERR_OUTBOUND_REFUSED` when an address it found is refused.
   */
  readonly lookup = (hostname: string, options: LookupOneOptions | LookupAllOptions | number, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    const byName = this.refusedHost(hostname);
    if (byName) return callback(refusal(byName), '', 0);
    const opts = typeof options === 'number' ? { family: options } : options;
    this.resolve(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      for (const a of list) {
        const why = this.refusedAddress(a.address);
        if (why) return callback(refusal(`${hostname} resolves to ${why}`), '', 0);
      }
      if ((opts as LookupAllOptions).all) return callback(null, list);
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, list[0].address, list[0].family);
    });
  };
}

function refusal(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code: 'ERR_OUTBOUND_REFUSED' });
}

/** CAIRN_OUTBOUND_ALLOW: comma-separated addresses, CIDR ranges or host names. */
export function parseOutboundAllow(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

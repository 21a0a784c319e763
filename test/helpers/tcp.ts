import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

// /proc/net/tcp counts timers in clock ticks (USER_HZ), 100 a second on every common configuration.
const TICKS_PER_SECOND = 100;
const ESTABLISHED = '01';
const KEEPALIVE_TIMER = '02';

interface TcpSocket {
  localPort: number;
  remotePort: number;
  state: string;
  /** Seconds until the kernel's keepalive timer fires; undefined when another timer, or none, runs. */
  keepAliveDue: number | undefined;
  inode: string;
}

/**
 * The IPv4 TCP sockets of the machine (Linux: /proc/net/tcp, whose `tr:tm->when` column names the
 * timer running, 2 being keepalive, and when it is due). An idle connection with SO_KEEPALIVE has
 * that timer due within its keepalive idle time; one without has none.
 */
function tcpSockets(): TcpSocket[] {
  const port = (address: string) => Number.parseInt(address.split(':')[1], 16);
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((columns) => columns.length > 9)
    .map((columns) => {
      const [timer, when] = columns[5].split(':');
      return {
        localPort: port(columns[1]),
        remotePort: port(columns[2]),
        state: columns[3],
        keepAliveDue: timer === KEEPALIVE_TIMER ? Number.parseInt(when, 16) / TICKS_PER_SECOND : undefined,
        inode: columns[9],
      };
    });
}

/** For each local port, the seconds until the keepalive timer of the socket bound to it fires, or undefined. */
export function keepAliveDue(localPorts: number[]): Array<number | undefined> {
  const sockets = tcpSockets();
  return localPorts.map((port) => sockets.find((s) => s.localPort === port)?.keepAliveDue);
}

/**
 * This process's established connections to `remotePort`, by local port, with when each one's
 * keepalive timer fires (undefined: none runs). Other processes' connections — servers of test files
 * running beside this one — are left out: the socket's inode must be one of this process's files.
 */
export function ownConnectionsTo(remotePort: number): Map<number, number | undefined> {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // Closed since the directory was read.
    }
  }
  const own = new Map<number, number | undefined>();
  for (const s of tcpSockets()) if (s.remotePort === remotePort && s.state === ESTABLISHED && inodes.has(s.inode)) own.set(s.localPort, s.keepAliveDue);
  return own;
}

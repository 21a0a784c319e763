import { readFileSync } from 'node:fs';

// /proc/net/tcp counts timers in clock ticks (USER_HZ), 100 a second on every common configuration.
const TICKS_PER_SECOND = 100;

/**
 * For each local port, the seconds until the kernel's keepalive timer fires on the IPv4 TCP socket
 * bound to it, or undefined when no keepalive timer runs (Linux: /proc/net/tcp, whose `tr:tm->when`
 * column names the timer, 2 being keepalive, and when it is due). An idle connection with
 * SO_KEEPALIVE has that timer due within its keepalive idle time; one without has none.
 */
export function keepAliveDue(localPorts: number[]): Array<number | undefined> {
  const rows = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/));
  return localPorts.map((port) => {
    const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
    const [timer, when] = rows.find((columns) => columns[1]?.endsWith(suffix))?.[5]?.split(':') ?? [];
    return timer === '02' ? Number.parseInt(when, 16) / TICKS_PER_SECOND : undefined;
  });
}

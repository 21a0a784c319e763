import type { Config } from '../config.ts';
import { Host } from '../http/host.ts';

/** Serves until SIGTERM or SIGINT, then stops accepting, lets in-flight requests finish and closes the
 * databases before exiting 0. */
export async function serve(config: Config): Promise<void> {
  const host = await Host.start(config);
  host.app.log.info(`Server listening at http://${config.host}:${host.port}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const log = host.app.log;
    log.info({ signal }, 'shutting down');
    try {
      await host.close();
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

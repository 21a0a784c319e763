import { buildApp } from '../app.ts';
import type { Config } from '../config.ts';

/** Serves until SIGTERM or SIGINT, then stops accepting, lets in-flight requests finish and closes the
 * databases before exiting 0. */
export async function serve(config: Config): Promise<void> {
  const { app } = await buildApp(config);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    try {
      await app.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
}

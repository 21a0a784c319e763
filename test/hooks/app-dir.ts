import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A temporary application directory, as an app using Cairn has one: `hooks/` with the given files
 * (TypeScript or JavaScript, subfolders allowed), and a `node_modules` that is this repository's, so
 * hook files can import npm packages as an installed app's would.
 */
export interface AppDir {
  root: string;
  hooks: string;
  write(file: string, text: string): void;
  remove(): void;
}

export function appDir(files: Record<string, string>): AppDir {
  const root = mkdtempSync(path.join(tmpdir(), 'cairn-app-'));
  const hooks = path.join(root, 'hooks');
  mkdirSync(hooks);
  symlinkSync(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  const write = (file: string, text: string) => {
    const full = path.join(hooks, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, text);
  };
  for (const [file, text] of Object.entries(files)) write(file, text);
  return { root, hooks, write, remove: () => rmSync(root, { recursive: true, force: true }) };
}

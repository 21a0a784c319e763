import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A temporary app folder whose `pb_hooks/` holds `files` (names may hold subfolders: `views/page.html`). */
export function pbDir(files: Record<string, string>): { root: string; dir: string; remove(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'cairn-pbhooks-'));
  const dir = path.join(root, 'pb_hooks');
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return { root, dir, remove: () => rmSync(root, { recursive: true, force: true }) };
}

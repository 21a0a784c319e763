import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { createCollection, type TestServer } from '../helpers/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A scratch directory under node_modules/.cache, so that files compiled there resolve the project's
 * packages (pocketbase, openapi-fetch) the way an application beside them would.
 */
export function scratchDir(): string {
  const base = path.join(ROOT, 'node_modules', '.cache');
  mkdirSync(base, { recursive: true });
  return mkdtempSync(path.join(base, 'cairn-types-'));
}

/** Type-checks `files` (name → source) as strict TypeScript; returns the diagnostics as text. */
export function typeCheck(dir: string, files: Record<string, string>): string[] {
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const program = ts.createProgram(
    Object.keys(files).map((f) => path.join(dir, f)),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      noUnusedLocals: false,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
    },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1} ` : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

/** Collections with a field of every type (single and multiple where it matters), and a hidden one. */
export async function everyFieldType(server: TestServer, db?: string): Promise<void> {
  await createCollection(server, { name: 'tags', fields: [{ name: 'label', type: 'text' }] }, db);
  await createCollection(
    server,
    {
      name: 'posts',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'body', type: 'editor' },
        { name: 'views', type: 'number' },
        { name: 'published', type: 'bool' },
        { name: 'contact', type: 'email' },
        { name: 'link', type: 'url' },
        { name: 'when', type: 'date' },
        { name: 'status', type: 'select', options: { values: ['draft', 'live'], maxSelect: 1 } },
        { name: 'flags', type: 'select', options: { values: ['a', 'b', 'c'], maxSelect: 3 } },
        { name: 'meta', type: 'json' },
        { name: 'author', type: 'relation', options: { toCollection: 'users', maxSelect: 1 } },
        { name: 'tags', type: 'relation', options: { toCollection: 'tags', maxSelect: 5 } },
        { name: 'cover', type: 'file', options: { maxSelect: 1 } },
        { name: 'gallery', type: 'file', options: { maxSelect: 4 } },
        { name: 'secret_note', type: 'text', hidden: true },
      ],
    },
    db,
  );
  await createCollection(server, { name: 'blog_entries', fields: [{ name: 'n', type: 'number' }] }, db);
}

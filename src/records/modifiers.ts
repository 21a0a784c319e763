import { type RequestContext, withRequest } from '../context.ts';
import type { RecordShape } from './shape.ts';

/** The field a write modifier key (`f+`, `+f`, `f-`) stands for, if it is one of `shape`'s fields. */
export function modifiedField(key: string, shape: RecordShape): string | undefined {
  const name = key.endsWith('+') || key.endsWith('-') ? key.slice(0, -1) : key.startsWith('+') ? key.slice(1) : undefined;
  return name !== undefined && name !== '' && shape.fields.some((f) => f.name === name) ? name : undefined;
}

/** Whether `body` sends any write modifier for a field of `shape`. */
export function hasModifiers(body: unknown, shape: RecordShape): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  return Object.keys(body).some((key) => modifiedField(key, shape) !== undefined);
}

/**
 * `ctx` with the request body rules read (`@request.body.*`) resolved as PocketBase ≥ 0.23 does: a
 * field sent through a modifier (`credits+`, `+badges`, `badges-`) appears under its own name with
 * the value the write stores (`values`), and the modifier keys are gone. `ctx` itself when the body
 * sends no modifier. Security: without it a rule such as `@request.body.credits:isset = false` is
 * sidestepped by sending `credits+`.
 */
export function withResolvedBody(ctx: RequestContext, shape: RecordShape, values: ReadonlyMap<string, unknown>): RequestContext {
  const body = ctx.request.body;
  if (!hasModifiers(body, shape)) return ctx;
  const resolved: Record<string, unknown> = {};
  const modified = new Set<string>();
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    const name = modifiedField(key, shape);
    if (name === undefined) resolved[key] = value;
    else modified.add(name);
  }
  // A field without a resolved value (its modifier was invalid) is still sent: `:isset` holds.
  for (const name of modified) resolved[name] = values.has(name) ? values.get(name) : null;
  return withRequest(ctx, { body: resolved });
}

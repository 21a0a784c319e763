/**
 * `{{event.path}}` placeholders in workflow step templates. A string that is exactly one placeholder
 * takes the value itself (a number stays a number, an object an object); placeholders inside longer
 * text are interpolated (objects as JSON, missing values as ''). Paths read own properties only, so
 * `{{event.__proto__}}` or `{{event.constructor}}` find nothing.
 */

const WHOLE = /^\{\{\s*([A-Za-z0-9_.$-]+)\s*\}\}$/;
const ANY = /\{\{\s*([A-Za-z0-9_.$-]+)\s*\}\}/g;

export function lookup(context: unknown, path: string): unknown {
  let current: unknown = context;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Renders a template (any JSON value) against `context`; keys are kept as written. */
export function render(template: unknown, context: unknown): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template);
    if (whole) return lookup(context, whole[1]) ?? null;
    return template.replace(ANY, (_m, path: string) => asText(lookup(context, path)));
  }
  if (Array.isArray(template)) return template.map((t) => render(t, context));
  if (template !== null && typeof template === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(template)) out[k] = render(v, context);
    return out;
  }
  return template;
}

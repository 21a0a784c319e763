import type { FieldError } from '../errors.ts';

/**
 * One section of the settings document (`meta`, `oauth2`, …), owned by the domain that uses it. A
 * section validates its own changes and decides what GET may show: secrets stay out of `view`.
 */
export interface SettingsSection<T = unknown> {
  name: string;
  defaults(): T;
  /**
   * The section after applying `input` to `current`; problems go to `errors`, keyed by dotted path
   * from the section's name (`meta.appName`; answered nested).
   */
  merge(input: unknown, current: T, errors: Record<string, FieldError>): T;
  view(value: T): unknown;
}

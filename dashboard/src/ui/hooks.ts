import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Store } from '../api.ts';

export function useStore<T>(store: Store<T>): T {
  const [value, setValue] = useState(store.get());
  useEffect(() => {
    setValue(store.get());
    return store.subscribe(() => setValue(store.get()));
  }, [store]);
  return value;
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change and on `reload()`; a later run replaces an earlier one still going, so
 * a slow answer never overwrites a newer one.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    loadRef.current(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, loading: false }),
      (error: unknown) => !ctl.signal.aborted && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => ctl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload } as Loaded<T>;
}

/** Wraps an async action: `busy` while it runs, the error it threw (cleared when it runs again). */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (...args: A): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await action(...args);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

/**
 * The actions a page runs on its rows (delete, rotate, restore…): which one is running (`busy`, by
 * the label given to run()), the error of the last one, and `after` (a reload) once each ends.
 */
export function useTasks(after: () => void) {
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<unknown>(undefined);
  const run = async (label: string, task: () => Promise<unknown>): Promise<void> => {
    setError(undefined);
    setBusy(label);
    try {
      await task();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(undefined);
      after();
    }
  };
  return { busy, error, setError, run };
}

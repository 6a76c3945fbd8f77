/** Loading API data into a component, and asking for it again until it is ready. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiProblem, describeError } from "./api/errors";
import { onThemeChange, themeShownNow, type ThemeShown } from "./theme";

export type Loaded<T> =
  | { state: "loading" }
  // notFound: what the address names does not exist; asking again cannot help.
  | { state: "error"; message: string; notFound?: boolean }
  | { state: "ready"; data: T };

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [value, setValue] = useState<Loaded<T>>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    setValue({ state: "loading" });
    load().then(
      (data) => live && setValue({ state: "ready", data }),
      (error: unknown) =>
        live &&
        setValue({
          state: "error",
          message: describeError(error),
          notFound: error instanceof ApiProblem && error.status === 404,
        }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, attempt]);
  const retry = useCallback(() => setAttempt((n) => n + 1), []);
  return [value, retry];
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Quizsite` : "Quizsite";
  }, [title]);
}

export interface Polling<T> {
  /** Milliseconds to wait before the next ask, given how many asks were made so far. */
  delay: (asked: number) => number;
  /** Takes an answer (the count includes this ask); true ends the polling. */
  onAnswer: (value: T, asked: number) => boolean;
  /** Takes a failed ask; true ends the polling. By default it goes on. */
  onError?: (error: unknown, asked: number) => boolean;
}

/** Asks `ask` again and again while `active`, until an answer or an error ends it, the inputs in `deps`
 * change, or the component goes. The one polling loop of the app: every page that waits on the server's
 * background work (a grading, retention advice) follows it with this. */
export function usePolling<T>(active: boolean, ask: () => Promise<T>, polling: Polling<T>, deps: unknown[]): void {
  const latest = useRef(polling);
  latest.current = polling;
  useEffect(() => {
    if (!active) return;
    let live = true;
    let asked = 0;
    let timer = 0;
    const next = () => {
      timer = window.setTimeout(poll, latest.current.delay(asked));
    };
    const poll = async () => {
      let done: boolean;
      try {
        const value = await ask();
        if (!live) return;
        asked += 1;
        done = latest.current.onAnswer(value, asked);
      } catch (error) {
        if (!live) return;
        asked += 1;
        done = latest.current.onError?.(error, asked) ?? false;
      }
      if (!done) next();
    };
    next();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [active, ...deps]);
}

/** Light or dark as shown now; the component renders again when it changes. */
export function useThemeShown(): ThemeShown {
  const [shown, setShown] = useState<ThemeShown>(themeShownNow);
  useEffect(() => onThemeChange(() => setShown(themeShownNow())), []);
  return shown;
}

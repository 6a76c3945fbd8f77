/** Loading API data into a component. */
import { useCallback, useEffect, useState } from "preact/hooks";
import { describeError } from "./api/errors";

export type Loaded<T> =
  | { state: "loading" }
  | { state: "error"; message: string }
  | { state: "ready"; data: T };

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [value, setValue] = useState<Loaded<T>>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    setValue({ state: "loading" });
    load().then(
      (data) => live && setValue({ state: "ready", data }),
      (error: unknown) => live && setValue({ state: "error", message: describeError(error) }),
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

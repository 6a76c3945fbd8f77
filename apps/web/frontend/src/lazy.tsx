/** Pages loaded as separate chunks on first visit, so the first paint carries only the shell. */
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { describeError } from "./api/errors";
import { ErrorMessage, Loading } from "./components/common";

export function lazyPage<P extends object>(load: () => Promise<{ default: ComponentType<P> }>): ComponentType<P> {
  let cached: ComponentType<P> | null = null;
  return function LazyPage(props: P) {
    const [Component, setComponent] = useState<ComponentType<P> | null>(() => cached);
    const [error, setError] = useState<string | null>(null);
    useEffect(() => {
      if (cached) return;
      let live = true;
      load().then(
        (module) => {
          cached = module.default;
          if (live) setComponent(() => module.default);
        },
        (caught: unknown) => live && setError(describeError(caught)),
      );
      return () => {
        live = false;
      };
    }, []);
    if (error !== null) return <ErrorMessage message={error} onRetry={() => location.reload()} />;
    if (!Component) return <Loading />;
    return <Component {...props} />;
  };
}

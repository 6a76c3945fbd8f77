/** The 3D view of a page, for the constellation and the explorer alike: it mounts a view into its host, keeps
 * the selection in step, and says while the view is loading and when it could not be shown. */
import { useEffect, useRef, useState } from "preact/hooks";
import { ErrorMessage, Loading } from "../components/common";
import type { ProbedElement } from "./viewer";

export interface StageView {
  select(slug: string | null): void;
  dispose(): void;
}

type Status = { state: "loading" } | { state: "ready" } | { state: "error"; message: string | null };

export function ThreeStage<Source>({
  source,
  mount,
  selected,
  onPick,
  onFail,
  label,
  describedBy,
  loadingLabel,
}: {
  /** What the view shows; a new one mounts a new view. */
  source: Source;
  mount: (host: ProbedElement, source: Source, onPick: (slug: string) => void) => StageView | Promise<StageView>;
  selected: string | null;
  onPick: (slug: string) => void;
  /** The message shown in place of the view when mounting failed; null when the page shows its own. */
  onFail: (error: unknown) => string | null;
  label: string;
  describedBy: string;
  loadingLabel?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const mounted = useRef<StageView | null>(null);
  // The latest callbacks and selection, read when the view calls back or finishes mounting.
  const latest = useRef({ onPick, onFail, selected });
  latest.current = { onPick, onFail, selected };
  const [status, setStatus] = useState<Status>({ state: "loading" });

  useEffect(() => {
    if (!host.current) return;
    let live = true;
    let view: StageView | null = null;
    setStatus({ state: "loading" });
    const element = host.current as ProbedElement;
    new Promise<StageView>((resolve) => resolve(mount(element, source, (slug) => latest.current.onPick(slug)))).then(
      (mountedView) => {
        if (!live) {
          mountedView.dispose();
          return;
        }
        view = mountedView;
        mounted.current = mountedView;
        mountedView.select(latest.current.selected);
        setStatus({ state: "ready" });
      },
      (error: unknown) => {
        if (live) setStatus({ state: "error", message: latest.current.onFail(error) });
      },
    );
    return () => {
      live = false;
      view?.dispose();
      mounted.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [source]);

  useEffect(() => {
    mounted.current?.select(selected);
  }, [selected]);

  return (
    <>
      <div
        ref={host}
        class="three-viewer"
        tabIndex={0}
        role="application"
        aria-roledescription="3D view"
        aria-label={label}
        aria-describedby={describedBy}
        aria-busy={status.state === "loading"}
      />
      {status.state === "loading" && loadingLabel && <Loading label={loadingLabel} />}
      {status.state === "error" && status.message && <ErrorMessage message={status.message} />}
    </>
  );
}

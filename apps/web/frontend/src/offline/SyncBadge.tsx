/** The header's "N reviews waiting to sync", and what the server refused; it also starts sending the signed-in
 * learner's waiting reviews when the app starts. The sending code loads as its own chunk after the first paint. */
import { useEffect, useRef, useState } from "preact/hooks";
import { describeRefusals, waitingText } from "./queue";
import type { SyncStatus } from "./sync";

type Engine = typeof import("./sync");

export function SyncBadge({ owner }: { owner: number }) {
  const [status, setStatus] = useState<SyncStatus | null>(null);
  const engine = useRef<Engine | null>(null);
  const hadWaiting = useRef(false);

  useEffect(() => {
    let live = true;
    let unsubscribe = () => {};
    import("./sync").then(
      (loaded) => {
        if (!live) return;
        engine.current = loaded;
        loaded.startSync(owner);
        unsubscribe = loaded.subscribe(setStatus);
      },
      () => undefined,
    );
    return () => {
      live = false;
      unsubscribe();
      engine.current?.stopSync(owner);
    };
  }, [owner]);

  function dismiss() {
    engine.current?.dismissRefusals();
    // The focused button goes away with the message: the page's content takes focus instead of nothing.
    document.getElementById("main")?.focus();
  }

  const count = status?.owner === owner ? status.count : 0;
  if (count > 0) hadWaiting.current = true;
  const refused = status?.owner === owner ? status.refused : [];
  let text = "";
  if (count > 0) text = waitingText(count);
  else if (hadWaiting.current) text = "All reviews synced.";

  return (
    <>
      <p class={count > 0 ? "sync-badge" : "visually-hidden"} role="status" aria-live="polite">
        {text}
      </p>
      {refused.length > 0 && (
        <div class="alert alert-error sync-refused" role="alert">
          <p>{describeRefusals(refused)}</p>
          <button type="button" class="button secondary" onClick={dismiss}>
            Dismiss
          </button>
        </div>
      )}
    </>
  );
}

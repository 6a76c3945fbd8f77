/** A settings form's save: busy while its request runs, its failure kept for the fields, its success said once. */
import { useRef, useState } from "preact/hooks";
import { describeError } from "../api/errors";
import { ErrorMessage } from "../components/common";

export interface Save {
  busy: boolean;
  error: unknown;
  saved: string;
  run: (action: () => Promise<string>) => Promise<void>;
}

/** One form's request: busy while it runs, its failure kept for the fields, its success said once. */
export function useSave(): Save {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState("");
  const running = useRef(false);
  async function run(action: () => Promise<string>): Promise<void> {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
    setSaved("");
    try {
      setSaved(await action());
    } catch (caught) {
      setError(caught);
    } finally {
      running.current = false;
      setBusy(false);
    }
  }
  return { busy, error, saved, run };
}

/** The form's outcome: the failure in words, and a live region that says when it was saved. */
export function SaveStatus({ save }: { save: Save }) {
  return (
    <>
      {save.error !== null && <ErrorMessage message={describeError(save.error)} />}
      <p class="saved" role="status">
        {save.saved}
      </p>
    </>
  );
}

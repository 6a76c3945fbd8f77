/** A settings form's save: busy while its request runs, its failure kept for the fields, its success said once. */
import { useRef, useState } from "preact/hooks";
import { ApiProblem, describeError } from "../api/errors";
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

/**
 * The form's outcome: the failure in words, and a live region that says when it was saved. `inline`: the
 * fields the form shows its own messages beside; a refusal that names only those points to them rather
 * than saying them twice (and in the API's field names).
 */
export function SaveStatus({ save, inline = [] }: { save: Save; inline?: string[] }) {
  return (
    <>
      {save.error !== null && <ErrorMessage message={saveFailure(save.error, inline)} />}
      <p class="saved" role="status">
        {save.saved}
      </p>
    </>
  );
}

export function saveFailure(error: unknown, inline: string[]): string {
  if (error instanceof ApiProblem && error.status === 400) {
    const named = Object.keys(error.fields);
    if (named.length > 0 && named.every((field) => inline.includes(field))) {
      return named.length === 1
        ? "Nothing was saved: please correct the field marked below."
        : `Nothing was saved: please correct the ${named.length} fields marked below.`;
    }
  }
  return describeError(error);
}

/** The settings forms' pieces: labelled inputs with the server's messages under them, and a save's state. */
import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";
import { describeError } from "../api/errors";
import { ErrorMessage, FieldErrors } from "../components/common";

function describedBy(id: string, hint: boolean, errors: string[]): string | undefined {
  return [hint ? `${id}-hint` : "", errors.length ? `${id}-errors` : ""].filter(Boolean).join(" ") || undefined;
}

export function Input({
  id,
  label,
  value,
  onInput,
  errors,
  hint,
  type = "text",
  list,
  inputMode,
  min,
  max,
  step,
  autoComplete,
}: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  errors: string[];
  hint?: ComponentChildren;
  type?: string;
  list?: string;
  inputMode?: "decimal" | "numeric" | "text";
  min?: number;
  max?: number;
  step?: number | "any";
  autoComplete?: string;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <input
        id={id}
        name={id}
        type={type}
        value={value}
        list={list}
        inputMode={inputMode}
        min={min}
        max={max}
        step={step}
        autoComplete={autoComplete ?? "off"}
        aria-invalid={errors.length > 0 ? "true" : undefined}
        aria-describedby={describedBy(id, Boolean(hint), errors)}
        onInput={(event) => onInput((event.currentTarget as HTMLInputElement).value)}
      />
      <FieldErrors id={`${id}-errors`} messages={errors} />
    </div>
  );
}

export function Check({
  id,
  label,
  checked,
  onChange,
  errors,
  hint,
}: {
  id: string;
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  errors: string[];
  hint?: string;
}) {
  return (
    <div class="field field-check">
      <input
        id={id}
        name={id}
        type="checkbox"
        checked={checked}
        aria-invalid={errors.length > 0 ? "true" : undefined}
        aria-describedby={describedBy(id, Boolean(hint), errors)}
        onChange={(event) => onChange((event.currentTarget as HTMLInputElement).checked)}
      />
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <FieldErrors id={`${id}-errors`} messages={errors} />
    </div>
  );
}

export function Select({
  id,
  label,
  value,
  options,
  onChange,
  errors,
  hint,
}: {
  id: string;
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (value: string) => void;
  errors: string[];
  hint?: string;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <select
        id={id}
        name={id}
        value={value}
        aria-invalid={errors.length > 0 ? "true" : undefined}
        aria-describedby={describedBy(id, Boolean(hint), errors)}
        onChange={(event) => onChange((event.currentTarget as HTMLSelectElement).value)}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      <FieldErrors id={`${id}-errors`} messages={errors} />
    </div>
  );
}

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

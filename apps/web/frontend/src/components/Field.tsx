/** The app's labelled form controls, each with its hint and the server's messages tied to it for assistive technology. */
import type { ComponentChildren } from "preact";
import { FieldErrors } from "./common";

function describedBy(id: string, hint: boolean, errors: string[]): string | undefined {
  return [hint ? `${id}-hint` : "", errors.length ? `${id}-errors` : ""].filter(Boolean).join(" ") || undefined;
}

function Hint({ id, children }: { id: string; children?: ComponentChildren }) {
  return children ? (
    <p class="hint" id={`${id}-hint`}>
      {children}
    </p>
  ) : null;
}

/** A text-like input; its element id is `id`, else `field-<name>`. */
export function Field({
  name,
  id = `field-${name}`,
  label,
  type = "text",
  value,
  onInput,
  errors,
  autoComplete,
  hint,
  required = true,
  list,
  inputMode,
  min,
  max,
  step,
}: {
  name: string;
  id?: string;
  label: string;
  type?: string;
  value: string;
  onInput: (value: string) => void;
  errors: string[];
  autoComplete?: string;
  hint?: ComponentChildren;
  required?: boolean;
  list?: string;
  inputMode?: "decimal" | "numeric" | "text";
  min?: number;
  max?: number;
  step?: number | "any";
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <Hint id={id}>{hint}</Hint>
      <input
        id={id}
        name={name}
        type={type}
        value={value}
        required={required}
        autoComplete={autoComplete}
        list={list}
        inputMode={inputMode}
        min={min}
        max={max}
        step={step}
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
      <Hint id={id}>{hint}</Hint>
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
      <Hint id={id}>{hint}</Hint>
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

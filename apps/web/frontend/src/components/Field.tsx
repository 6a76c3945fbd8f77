/** A labelled form input with its server-side messages tied to it for assistive technology. */
import { FieldErrors } from "./common";

export function Field({
  name,
  label,
  type = "text",
  value,
  onInput,
  errors,
  autoComplete,
  hint,
  required = true,
}: {
  name: string;
  label: string;
  type?: string;
  value: string;
  onInput: (value: string) => void;
  errors: string[];
  autoComplete?: string;
  hint?: string;
  required?: boolean;
}) {
  const id = `field-${name}`;
  const describedBy = [hint ? `${id}-hint` : "", errors.length ? `${id}-errors` : ""].filter(Boolean).join(" ");
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
        name={name}
        type={type}
        value={value}
        required={required}
        autoComplete={autoComplete}
        aria-invalid={errors.length > 0 ? "true" : undefined}
        aria-describedby={describedBy || undefined}
        onInput={(event) => onInput((event.currentTarget as HTMLInputElement).value)}
      />
      <FieldErrors id={`${id}-errors`} messages={errors} />
    </div>
  );
}

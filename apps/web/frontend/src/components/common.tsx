/** Small shared pieces: status messages, loading, and the page heading that takes focus. */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { Loaded } from "../hooks";
import { takeTitleFocus } from "../router";

export function ErrorMessage({ message, onRetry }: { message: string; onRetry?: () => void }) {
  return (
    <div class="alert alert-error" role="alert">
      <p>{message}</p>
      {onRetry && (
        <button type="button" class="button secondary" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** What an address names does not exist (the API said 404): said in words, with the way home, and no retry. */
export function NothingHere() {
  return (
    <div class="alert alert-error" role="alert">
      <p>Nothing is at this address: what it names does not exist, or is no longer open to you.</p>
      <p>
        <a href="/">Back to home</a>
      </p>
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="alert alert-info" role="status">
      {children}
    </div>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p class="loading" role="status">
      {label}
    </p>
  );
}

/** Renders the loading and error states, and the page itself once the data is there. */
export function Await<T>({
  value,
  retry,
  children,
}: {
  value: Loaded<T>;
  retry?: () => void;
  children: (data: T) => ComponentChildren;
}) {
  if (value.state === "loading") return <Loading />;
  if (value.state === "error" && value.notFound) return <NothingHere />;
  if (value.state === "error") return <ErrorMessage message={value.message} onRetry={retry} />;
  return <>{children(value.data)}</>;
}

/** The page's h1; it takes focus after navigation so screen readers announce the new page. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (takeTitleFocus() || document.activeElement === document.body || document.activeElement === null) {
      ref.current?.focus({ preventScroll: true });
    }
  }, []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

export function FieldErrors({ id, messages }: { id: string; messages: string[] }) {
  if (messages.length === 0) return null;
  return (
    <ul class="field-errors" id={id}>
      {messages.map((message) => (
        <li key={message}>{message}</li>
      ))}
    </ul>
  );
}

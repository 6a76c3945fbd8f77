/** Turns any failure of an API call into one sentence a learner can read. */

export interface ApiErrorBody {
  error: { code: string; message: string; fields: Record<string, string[]> };
}

/** A response that was not a success, with what the server said about it. */
export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly fields: Record<string, string[]>;
  readonly retryAfter: number | null;
  readonly serverMessage: string;

  constructor(status: number, body: unknown, retryAfter: string | null) {
    const parsed = isErrorBody(body) ? body.error : null;
    super(parsed?.message ?? `HTTP ${status}`);
    this.name = "ApiProblem";
    this.status = status;
    this.code = parsed?.code ?? "";
    this.serverMessage = parsed?.message ?? "";
    this.fields = parsed?.fields ?? {};
    this.retryAfter = parseRetryAfter(retryAfter);
  }
}

/** The request never got an answer: offline, DNS, connection reset, CORS. */
export class NetworkProblem extends Error {
  constructor(cause?: unknown) {
    super("network failure", { cause });
    this.name = "NetworkProblem";
  }
}

export function isErrorBody(body: unknown): body is ApiErrorBody {
  if (typeof body !== "object" || body === null || !("error" in body)) return false;
  const error = (body as { error: unknown }).error;
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { message?: unknown }).message === "string" &&
    typeof (error as { code?: unknown }).code === "string"
  );
}

/** Whole seconds from a Retry-After header: a number of seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.max(1, parseInt(trimmed, 10));
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(1, Math.ceil((at - now) / 1000));
}

export function formatWait(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? "1 second" : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}

/** fetch rejects with a TypeError when no response came back at all. */
export function isNetworkFailure(error: unknown): boolean {
  return error instanceof NetworkProblem || error instanceof TypeError;
}

function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") return trimmed;
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** One sentence for the learner, whatever went wrong; never raw JSON, never empty. */
export function describeError(error: unknown): string {
  if (isNetworkFailure(error)) {
    return "Could not reach the server. Check your connection and try again.";
  }
  if (error instanceof ApiProblem) {
    if (error.status === 429 || error.code === "sync_in_progress") {
      const wait = error.retryAfter;
      const base =
        error.status === 429 ? "Too many requests for now." : "Your other reviews are still being saved.";
      return wait === null ? `${base} Please try again shortly.` : `${base} Please try again in ${formatWait(wait)}.`;
    }
    if (error.status >= 500) {
      return "Something went wrong on the server. Please try again in a moment.";
    }
    if (error.status === 401) return "Please sign in again.";
    if (error.status === 404 && error.serverMessage === "") return "That page or item was not found.";
    if (error.serverMessage !== "") {
      const fieldLines = Object.entries(error.fields)
        .flatMap(([, messages]) => messages)
        // The server's message often lists the field messages already.
        .filter((message) => message.trim() !== "" && !error.serverMessage.includes(message.trim()));
      const unique = [...new Set(fieldLines.map(sentence))];
      return [sentence(error.serverMessage), ...unique].join(" ");
    }
    return `The request was refused (HTTP ${error.status}). Please try again.`;
  }
  return "Something unexpected went wrong. Please reload the page and try again.";
}

/** Messages for one form field, by its name in the request body. */
export function fieldErrors(error: unknown, field: string): string[] {
  return error instanceof ApiProblem ? (error.fields[field] ?? []) : [];
}

/** The settings page's logic, pure: time zones, numbers as typed, and the retention advice in words. */

/** Every zone the browser knows, sorted, with `extra` (the saved one, UTC) kept even when it does not list them. */
export function timeZoneNames(supported: readonly string[], extra: readonly string[] = []): string[] {
  return [...new Set([...supported, ...extra.filter((name) => name !== "")])].sort((a, b) => a.localeCompare(b));
}

export function browserTimeZones(): string[] {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return [];
  }
}

export function browserTimeZone(): string | null {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || null;
  } catch {
    return null;
  }
}

/**
 * The zone the form starts with: the saved one, or the browser's while the learner has never saved
 * any scheduling setting (the server's default, UTC, was then never their choice).
 */
export function initialTimeZone(saved: string, everSaved: boolean, browser: string | null): string {
  if (everSaved || browser === null || saved !== "UTC") return saved;
  return browser;
}

/**
 * A number as typed. Anything that is not one is sent as typed, so that the server, which owns the
 * rules, says what is wrong with it.
 */
export function numberOrRaw(text: string): number | string {
  const trimmed = text.trim();
  if (trimmed === "") return trimmed;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : trimmed;
}

/** Only what differs from the saved values, so a save touches nothing else. */
export function changed<T extends Record<string, unknown>>(saved: T, edited: Partial<T>): Partial<T> {
  const out: Partial<T> = {};
  for (const key of Object.keys(edited) as (keyof T)[]) {
    if (edited[key] !== saved[key]) out[key] = edited[key];
  }
  return out;
}

export function hourLabel(hour: number): string {
  return `${String(hour).padStart(2, "0")}:00`;
}

/** The 24 hours of a day as a select's options, labelled 00:00 to 23:00. */
export const HOUR_OPTIONS = Array.from({ length: 24 }, (_, hour) => ({ value: String(hour), label: hourLabel(hour) }));

export interface Workload {
  reviews_per_day: number;
  minutes_per_day: number;
}

export interface Advice {
  status: "computing" | "ready" | "failed";
  advised_retention: number | null;
  advised: Workload | null;
  current: Workload | null;
}

/** Minutes a day: whole ones from 10 on, tenths below, where a minute or two apart is a real difference. */
function minutes(value: number): string {
  const rounded = value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return rounded === 1 ? "1 minute" : `${rounded} minutes`;
}

/** The advice as one or two sentences; null while there is nothing to say. */
export function adviceText(advice: Advice, desired: number): string | null {
  if (advice.status === "failed") return "The advice could not be worked out this time; it is tried again later.";
  if (advice.status !== "ready" || advice.advised_retention === null) return null;
  const advised = advice.advised_retention;
  if (Math.abs(advised - desired) < 0.005) {
    const cost = advice.current ? `, about ${minutes(advice.current.minutes_per_day)} of study a day` : "";
    return `Your desired retention, ${desired.toFixed(2)}, already costs the least study time per card remembered${cost}.`;
  }
  const advisedLoad = advice.advised;
  const currentLoad = advice.current;
  let cost = "";
  if (advisedLoad && currentLoad) {
    const advisedMinutes = minutes(advisedLoad.minutes_per_day);
    const currentMinutes = minutes(currentLoad.minutes_per_day);
    cost =
      advisedMinutes === currentMinutes
        ? `: about ${Math.round(advisedLoad.reviews_per_day)} reviews a day, against ${Math.round(currentLoad.reviews_per_day)} at your ${desired.toFixed(2)}, the same study time`
        : `: about ${advisedMinutes} of study a day, against about ${currentMinutes} at your ${desired.toFixed(2)}`;
  }
  return `${advised.toFixed(2)} would cost the least study time per card remembered${cost}. It is advice only: nothing changes unless you set it.`;
}

/** The name a download of the account's data is saved under. */
export function exportFileName(username: string, now: Date): string {
  const safe = username.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "account";
  return `quizsite-${safe}-${now.toISOString().slice(0, 10)}.json`;
}

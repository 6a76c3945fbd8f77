/** Human-readable intervals, counts and moments. */

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;

function trimmed(value: number): string {
  const rounded = value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return String(rounded);
}

/** An interval in seconds as a short label: "45 s", "10 min", "3 h", "3 d", "2 mo", "1.5 y". */
export function formatInterval(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "";
  if (seconds < MINUTE) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < HOUR) return `${Math.round(seconds / MINUTE)} min`;
  if (seconds < DAY) return `${trimmed(seconds / HOUR)} h`;
  if (seconds < MONTH) return `${Math.round(seconds / DAY)} d`;
  if (seconds < YEAR) return `${trimmed(seconds / MONTH)} mo`;
  return `${trimmed(seconds / YEAR)} y`;
}

/** The same interval spelled out for screen readers: "10 minutes", "3 days". */
export function describeInterval(seconds: number): string {
  const short = formatInterval(seconds);
  const [value = "", unit = ""] = short.split(" ");
  const words: Record<string, [string, string]> = {
    s: ["second", "seconds"],
    min: ["minute", "minutes"],
    h: ["hour", "hours"],
    d: ["day", "days"],
    mo: ["month", "months"],
    y: ["year", "years"],
  };
  const pair = words[unit];
  if (!pair) return short;
  return `${value} ${value === "1" ? pair[0] : pair[1]}`;
}

export function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** A moment as every page writes it: the learner's locale, medium date and short time ("6 Dec 2026, 14:05"). */
export function formatMoment(iso: string, locale?: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toLocaleString(locale, { dateStyle: "medium", timeStyle: "short" });
}

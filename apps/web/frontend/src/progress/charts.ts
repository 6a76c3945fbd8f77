/** The progress page's figures, pure: the year's calendar, and each plot's words for screen readers. */

export interface DayCount {
  date: string;
  count: number;
}

export interface WeekRetention {
  start: string;
  reviews: number;
  passed: number;
  retention: number | null;
}

export interface DeckMastery {
  deck: string;
  title: string;
  total: number;
  mastery: number;
  counts: { new: number };
}

const DAY_MS = 86_400_000;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/** Learner-local days are plain dates: they are counted as UTC midnights so no time zone moves them. */
export function dayNumber(date: string): number {
  const [y = "0", m = "1", d = "1"] = date.split("-");
  return Math.round(Date.UTC(Number(y), Number(m) - 1, Number(d)) / DAY_MS);
}

export function dayString(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** Monday 0 to Sunday 6. */
export function weekday(day: number): number {
  return (new Date(day * DAY_MS).getUTCDay() + 6) % 7;
}

/** "5 Mar". */
export function shortDate(date: string): string {
  const at = new Date(dayNumber(date) * DAY_MS);
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]}`;
}

/** "Wed 5 Mar". */
export function dayLabel(date: string): string {
  return `${WEEKDAYS[weekday(dayNumber(date))]} ${shortDate(date)}`;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function percent(value: number): string {
  return `${Math.round(value * 100)}%`;
}

export interface HeatCell {
  date: string;
  count: number;
  /** 0 for none, then 1 to 4 by the share of the busiest day. */
  level: 0 | 1 | 2 | 3 | 4;
  week: number;
  weekday: number;
}

export interface Heatmap {
  days: number;
  cells: HeatCell[];
  weeks: number;
  months: { week: number; label: string }[];
  total: number;
  activeDays: number;
  busiest: DayCount | null;
}

/** The calendar of the `days` days up to `today`, in week columns that start on Monday. */
export function heatmap(perDay: DayCount[], today: string, days = 365): Heatmap {
  const last = dayNumber(today);
  const first = last - days + 1;
  const counts = new Map<number, number>();
  for (const { date, count } of perDay) {
    const day = dayNumber(date);
    if (day >= first && day <= last) counts.set(day, (counts.get(day) ?? 0) + count);
  }
  const max = Math.max(0, ...counts.values());
  const firstMonday = first - weekday(first);
  const cells: HeatCell[] = [];
  const months: { week: number; label: string }[] = [];
  let total = 0;
  let activeDays = 0;
  let busiest: DayCount | null = null;
  for (let day = first; day <= last; day++) {
    const count = counts.get(day) ?? 0;
    const week = Math.floor((day - firstMonday) / 7);
    const date = dayString(day);
    const level = count === 0 ? 0 : (Math.min(4, Math.max(1, Math.ceil((count / max) * 4))) as HeatCell["level"]);
    cells.push({ date, count, level, week, weekday: weekday(day) });
    if (date.endsWith("-01") || day === first) {
      const label = MONTHS[Number(date.slice(5, 7)) - 1] ?? "";
      // A label for the first days would crowd the next month's when that month starts a week later.
      if (day !== first || Number(date.slice(8, 10)) <= 21) months.push({ week, label });
    }
    if (count > 0) {
      total += count;
      activeDays += 1;
      if (busiest === null || count > busiest.count) busiest = { date, count };
    }
  }
  return { days, cells, weeks: Math.floor((last - firstMonday) / 7) + 1, months, total, activeDays, busiest };
}

/** "the past year", "the past 26 weeks". */
export function periodName(days: number): string {
  if (days >= 365) return "the past year";
  return days % 7 === 0 ? `the past ${days / 7} weeks` : `the past ${days} days`;
}

export function heatmapSummary(map: Heatmap): string {
  const period = periodName(map.days);
  if (map.total === 0) return `No reviews in ${period} yet.`;
  const busiest = map.busiest;
  return (
    `${plural(map.total, "review", "reviews")} on ${plural(map.activeDays, "day", "days")} in ${period}` +
    (busiest ? `; the busiest day was ${shortDate(busiest.date)}, with ${plural(busiest.count, "review", "reviews")}.` : ".")
  );
}

export function forecastSummary(forecast: DayCount[]): string {
  const total = forecast.reduce((sum, day) => sum + day.count, 0);
  if (total === 0) return "No reviews are due in the next 30 days.";
  const today = forecast[0]?.count ?? 0;
  let busiest = forecast[0];
  for (const day of forecast) if (busiest === undefined || day.count > busiest.count) busiest = day;
  const parts = [`${plural(total, "review", "reviews")} due in the next ${forecast.length} days`];
  parts.push(`${today} today, overdue ones included`);
  if (busiest && busiest.count > 0) parts.push(`the busiest day is ${dayLabel(busiest.date)}, with ${busiest.count}`);
  return `${parts.join("; ")}.`;
}

export function retentionSummary(weeks: WeekRetention[]): string {
  const reviews = weeks.reduce((sum, week) => sum + week.reviews, 0);
  const passed = weeks.reduce((sum, week) => sum + week.passed, 0);
  if (reviews === 0) return "No reviews of learned cards yet: retention shows once cards come back for review.";
  const lastWeek = [...weeks].reverse().find((week) => week.retention !== null);
  const latest =
    lastWeek && lastWeek.retention !== null
      ? ` The latest week with reviews, from ${shortDate(lastWeek.start)}: ${percent(lastWeek.retention)}.`
      : "";
  return `You remembered ${percent(passed / reviews)} of ${plural(reviews, "review", "reviews")} of learned cards over the past ${weeks.length} weeks.${latest}`;
}

export function masterySummary(decks: DeckMastery[]): string {
  if (decks.length === 0) return "No decks yet.";
  const started = decks.filter((deck) => deck.counts.new < deck.total);
  if (started.length === 0) return `${plural(decks.length, "deck", "decks")}, none started yet.`;
  const best = started.reduce((a, b) => (b.mastery > a.mastery ? b : a));
  return (
    `${plural(started.length, "deck", "decks")} of ${decks.length} started; ` +
    `${decks.map((deck) => `${deck.title} ${percent(deck.mastery)}`).join(", ")}. Best: ${best.title}.`
  );
}

export function streakSummary(streak: { current: number; longest: number }): string {
  if (streak.longest === 0) return "No study streak yet: review a card today to start one.";
  const now = streak.current === 0 ? "No streak running now" : `${plural(streak.current, "day", "days")} in a row now`;
  return `${now}; longest ${plural(streak.longest, "day", "days")}.`;
}

/** Ticks of an index axis: only whole positions, labelled from `labels`. */
export function indexTicks(splits: number[], labels: string[]): string[] {
  return splits.map((split) => (Number.isInteger(split) ? (labels[split] ?? "") : ""));
}

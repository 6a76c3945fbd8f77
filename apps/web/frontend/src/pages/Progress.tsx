/** The learner's progress as plots: the year's reviews, what comes due, retention by week, streak, mastery. */
import { useMemo } from "preact/hooks";
import { call, client } from "../api/client";
import type { components } from "../api/schema";
import { Await, PageTitle } from "../components/common";
import { useLoad, useTitle } from "../hooks";
import { Calendar, MasteryBars } from "../progress/Calendar";
import {
  forecastSummary,
  heatmap,
  masterySummary,
  retentionSummary,
  shortDate,
  streakSummary,
} from "../progress/charts";
import { Plot } from "../progress/Plot";

type Stats = components["schemas"]["StatsOutput"];

const RETENTION_RANGE: [number, number] = [0, 100];
const asPercent = (value: number) => `${Math.round(value)}%`;
const asCount = (value: number) => (Number.isInteger(value) ? String(value) : "");

async function loadStats(): Promise<Stats> {
  return call(client.GET("/api/v1/stats/"));
}

export default function Progress() {
  useTitle("Progress");
  const [value, retry] = useLoad(loadStats, []);
  return (
    <div class="progress-page">
      <PageTitle>Progress</PageTitle>
      <Await value={value} retry={retry}>
        {(stats) => <ProgressPlots stats={stats} />}
      </Await>
    </div>
  );
}

function ProgressPlots({ stats }: { stats: Stats }) {
  // A year of week columns is too fine to read on a phone: half a year there.
  const days = useMemo(() => (window.matchMedia("(min-width: 40rem)").matches ? 365 : 182), []);
  const map = useMemo(() => heatmap(stats.reviews_per_day, stats.today, days), [stats, days]);
  const forecast = useMemo(
    () => ({ labels: stats.due_forecast.map((day) => shortDate(day.date)), values: stats.due_forecast.map((day) => day.count) }),
    [stats],
  );
  const retention = useMemo(
    () => ({
      labels: stats.retention_by_week.map((week) => shortDate(week.start)),
      values: stats.retention_by_week.map((week) => (week.retention === null ? null : week.retention * 100)),
    }),
    [stats],
  );
  const dueToday = stats.due_forecast[0]?.count ?? 0;
  const reviewed = stats.reviews_per_day.some((day) => day.count > 0);
  const dueSoon = stats.due_forecast.some((day) => day.count > 0);
  const retained = stats.retention_by_week.some((week) => week.reviews > 0);
  const started = stats.decks.some((deck) => deck.counts.new < deck.total);

  return (
    <>
      {!reviewed && (
        <div class="card progress-empty">
          <h2>Nothing to show yet</h2>
          <p>
            Your progress appears here once you review some cards. <a href="/study">Start studying</a>.
          </p>
        </div>
      )}
      <div class="progress-grid">
        <section class="card streak" aria-labelledby="streak-title">
          <h2 id="streak-title">Streak</h2>
          <p class="streak-figures">
            <span class="streak-figure">
              <span class="streak-number">{stats.streak.current}</span> {stats.streak.current === 1 ? "day" : "days"} now
            </span>
            <span class="streak-figure">
              <span class="streak-number">{stats.streak.longest}</span> longest
            </span>
          </p>
          <p class="meta">{streakSummary(stats.streak)}</p>
        </section>
        <section class="card" aria-labelledby="today-title">
          <h2 id="today-title">Due today</h2>
          <p class="streak-figures">
            <span class="streak-figure">
              <span class="streak-number">{dueToday}</span> {dueToday === 1 ? "card" : "cards"} due
            </span>
          </p>
          <p class="meta">
            Days follow your time zone, {stats.timezone}. <a href="/study">Study now</a>
          </p>
        </section>
      </div>
      <section class="card" aria-labelledby="heatmap-title">
        <h2 id="heatmap-title">Reviews</h2>
        <Calendar map={map} />
      </section>
      <section class="card" aria-labelledby="forecast-title">
        <h2 id="forecast-title">Due in the next 30 days</h2>
        {dueSoon ? (
          <Plot
            label="Reviews due per day, next 30 days"
            summary={forecastSummary(stats.due_forecast)}
            kind="bars"
            xLabels={forecast.labels}
            values={forecast.values}
            seriesLabel="Reviews due"
            yFormat={asCount}
            colour="--easy"
          />
        ) : (
          <p>{forecastSummary(stats.due_forecast)} Cards you study come back here on their days.</p>
        )}
      </section>
      <section class="card" aria-labelledby="retention-title">
        <h2 id="retention-title">Retention by week</h2>
        {retained ? (
          <Plot
            label="Share of reviews of learned cards remembered, per week"
            summary={retentionSummary(stats.retention_by_week)}
            kind="line"
            xLabels={retention.labels}
            values={retention.values}
            seriesLabel="Retention"
            yRange={RETENTION_RANGE}
            yFormat={asPercent}
            colour="--good"
          />
        ) : (
          <p>{retentionSummary(stats.retention_by_week)}</p>
        )}
      </section>
      <section class="card" aria-labelledby="mastery-title">
        <h2 id="mastery-title">Mastery per deck</h2>
        {stats.decks.length === 0 ? (
          <p>No decks yet.</p>
        ) : (
          <>
            <p class="meta">
              {started
                ? "How well a deck's cards are known and lasting: each card's chance of recall now, counted in full once you remember it for three weeks, in part before; cards not yet studied count 0."
                : "Study a deck to see its mastery grow."}
            </p>
            <MasteryBars decks={stats.decks} summary={masterySummary(stats.decks)} />
          </>
        )}
      </section>
    </>
  );
}

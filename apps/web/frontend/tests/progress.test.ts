import { describe, expect, it } from "vitest";
import {
  dayLabel,
  forecastSummary,
  heatmap,
  heatmapSummary,
  indexTicks,
  masterySummary,
  retentionSummary,
  shortDate,
  streakSummary,
} from "../src/progress/charts";
import { byDue, dueHeadline, totalDue, type DeckDue } from "../src/progress/due";

describe("dates", () => {
  it("labels learner-local days without a time zone moving them", () => {
    expect(shortDate("2025-03-05")).toBe("5 Mar");
    expect(dayLabel("2025-03-05")).toBe("Wed 5 Mar");
    expect(dayLabel("2024-12-31")).toBe("Tue 31 Dec");
  });
});

describe("heatmap", () => {
  it("lays the days out in Monday-first week columns, with levels by the busiest day", () => {
    // 2025-03-05 is a Wednesday.
    const map = heatmap(
      [
        { date: "2025-03-05", count: 8 },
        { date: "2025-03-03", count: 2 },
        { date: "2024-01-01", count: 50 },
      ],
      "2025-03-05",
      10,
    );
    expect(map.cells).toHaveLength(10);
    expect(map.cells[0]).toMatchObject({ date: "2025-02-24", weekday: 0, week: 0, level: 0 });
    const last = map.cells[9];
    expect(last).toMatchObject({ date: "2025-03-05", weekday: 2, week: 1, count: 8, level: 4 });
    expect(map.cells.find((cell) => cell.date === "2025-03-03")?.level).toBe(1);
    expect(map.weeks).toBe(2);
    // The review outside the period does not count.
    expect(map.total).toBe(10);
    expect(map.activeDays).toBe(2);
    expect(map.busiest).toEqual({ date: "2025-03-05", count: 8 });
    // February's last days get no label of their own: March's, in the same column, would collide.
    expect(map.months).toEqual([{ week: 0, label: "Mar" }]);
  });

  it("a year ends on today and starts 364 days before", () => {
    const map = heatmap([], "2025-03-05");
    expect(map.cells).toHaveLength(365);
    expect(map.cells[0]?.date).toBe("2024-03-06");
    expect(map.cells.at(-1)?.date).toBe("2025-03-05");
    expect(heatmapSummary(map)).toBe("No reviews in the past year yet.");
  });

  it("is summed up in words", () => {
    const map = heatmap([{ date: "2025-03-01", count: 3 }, { date: "2025-03-02", count: 1 }], "2025-03-05", 182);
    expect(heatmapSummary(map)).toBe(
      "4 reviews on 2 days in the past 26 weeks; the busiest day was 1 Mar, with 3 reviews.",
    );
  });
});

describe("summaries", () => {
  it("sums up the forecast", () => {
    const forecast = [
      { date: "2025-03-05", count: 4 },
      { date: "2025-03-06", count: 9 },
      { date: "2025-03-07", count: 0 },
    ];
    expect(forecastSummary(forecast)).toBe(
      "13 reviews due in the next 3 days; 4 today, overdue ones included; the busiest day is Thu 6 Mar, with 9.",
    );
    expect(forecastSummary([{ date: "2025-03-05", count: 0 }])).toBe("No reviews are due in the next 30 days.");
  });

  it("sums up retention over the weeks with reviews", () => {
    const weeks = [
      { start: "2025-02-24", reviews: 10, passed: 9, retention: 0.9 },
      { start: "2025-03-03", reviews: 0, passed: 0, retention: null },
    ];
    expect(retentionSummary(weeks)).toBe(
      "You remembered 90% of 10 reviews of learned cards over the past 2 weeks. The latest week with reviews, from 24 Feb: 90%.",
    );
    expect(retentionSummary([weeks[1]!])).toContain("No reviews of learned cards yet");
  });

  it("sums up mastery and streaks", () => {
    const decks = [
      { deck: "a", title: "Alpha", total: 10, mastery: 0.5, counts: { new: 2 } },
      { deck: "b", title: "Beta", total: 5, mastery: 0, counts: { new: 5 } },
    ];
    expect(masterySummary(decks)).toBe("1 deck of 2 started; Alpha 50%, Beta 0%. Best: Alpha.");
    expect(masterySummary([decks[1]!])).toBe("1 deck, none started yet.");
    expect(streakSummary({ current: 0, longest: 0 })).toContain("No study streak yet");
    expect(streakSummary({ current: 3, longest: 7 })).toBe("3 days in a row now; longest 7 days.");
  });

  it("labels only whole positions of an index axis", () => {
    expect(indexTicks([0, 0.5, 1, 2], ["a", "b"])).toEqual(["a", "", "b", ""]);
  });
});

describe("study overview", () => {
  const deck = (slug: string, counts: DeckDue["counts"]): DeckDue => ({
    slug,
    title: slug,
    course: "c",
    cardCount: 10,
    counts,
  });

  it("totals what is due and puts the decks with most due first, keeping the order otherwise", () => {
    const decks = [
      deck("a", { learning: 0, review: 0, new: 0 }),
      deck("b", { learning: 1, review: 2, new: 3 }),
      deck("c", null),
      deck("d", { learning: 0, review: 0, new: 0 }),
      deck("e", { learning: 0, review: 9, new: 0 }),
    ];
    expect(totalDue(decks)).toBe(15);
    expect(byDue(decks).map((d) => d.slug)).toEqual(["e", "b", "a", "c", "d"]);
    expect(dueHeadline(decks)).toBe("cards to study now, in 2 decks.");
    expect(dueHeadline([decks[4]!])).toBe("cards to study now, in 1 deck.");
    expect(dueHeadline([decks[0]!])).toBe("Nothing is due right now. Well done.");
    expect(dueHeadline([])).toBe("No decks are published yet.");
  });
});

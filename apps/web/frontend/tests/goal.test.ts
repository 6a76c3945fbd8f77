import { describe, expect, it } from "vitest";
import { goalAfter, goalProgressText, goalStreakText, type Goal } from "../src/goal/goal";

const base: Goal = { goal: 20, reviews_today: 18, met: false, streak: 3, day_end: "2026-11-03T03:00:00Z" };

describe("daily goal", () => {
  it("says how far today is, and how many to go", () => {
    expect(goalProgressText(base)).toBe("18 of 20 reviews today, 2 to go.");
    expect(goalStreakText(base)).toBe("Met 3 days in a row up to yesterday.");
  });

  it("is met by the reviews made on the page, and today joins the streak once", () => {
    const nineteen = goalAfter(base, 1);
    expect(nineteen).toMatchObject({ reviews_today: 19, met: false, streak: 3 });
    const met = goalAfter(nineteen, 1);
    expect(met).toMatchObject({ reviews_today: 20, met: true, streak: 4 });
    expect(goalAfter(met, 1)).toMatchObject({ reviews_today: 21, met: true, streak: 4 });
    expect(goalProgressText(met)).toBe("Goal met: 20 of 20 reviews today.");
    expect(goalStreakText(met)).toBe("Met 4 days in a row.");
    // An undo below the goal takes today off the streak again.
    expect(goalAfter(met, -1)).toMatchObject({ reviews_today: 19, met: false, streak: 3 });
  });

  it("without a goal counts the reviews and claims no streak", () => {
    const none: Goal = { ...base, goal: 0, reviews_today: 1, streak: 0 };
    expect(goalProgressText(none)).toBe("1 review today.");
    expect(goalStreakText(none)).toBe("");
    expect(goalAfter(none, 5)).toMatchObject({ reviews_today: 6, met: false, streak: 0 });
    expect(goalAfter(none, -9).reviews_today).toBe(0);
  });

  it("says one review and one day in the singular", () => {
    const one: Goal = { ...base, goal: 1, reviews_today: 1, met: true, streak: 1 };
    expect(goalProgressText(one)).toBe("Goal met: 1 of 1 review today.");
    expect(goalStreakText(one)).toBe("Met 1 day in a row.");
  });
});

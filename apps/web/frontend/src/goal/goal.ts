/** The daily goal in words: pure, so the wording is tested without a page. */
import type { components } from "../api/schema";

export type Goal = components["schemas"]["DailyGoalOutput"];

/** The goal after `delta` reviews made (or undone) on this page since it was read. */
export function goalAfter(goal: Goal, delta: number): Goal {
  const reviewsToday = Math.max(0, goal.reviews_today + delta);
  const met = goal.goal > 0 && reviewsToday >= goal.goal;
  // Meeting it today adds today to a streak that ran up to yesterday; undoing below it takes today off again.
  const streak = met && !goal.met ? goal.streak + 1 : !met && goal.met ? Math.max(0, goal.streak - 1) : goal.streak;
  return { ...goal, reviews_today: reviewsToday, met, streak };
}

function reviews(count: number): string {
  return count === 1 ? "1 review" : `${count} reviews`;
}

function days(count: number): string {
  return count === 1 ? "1 day" : `${count} days`;
}

/** "12 of 20 reviews today, 8 to go", "Goal met: 23 of 20 reviews today", or the count alone without a goal. */
export function goalProgressText(goal: Goal): string {
  if (goal.goal === 0) return `${reviews(goal.reviews_today)} today.`;
  if (goal.met) return `Goal met: ${goal.reviews_today} of ${reviews(goal.goal)} today.`;
  return `${goal.reviews_today} of ${reviews(goal.goal)} today, ${goal.goal - goal.reviews_today} to go.`;
}

/** "Met 3 days in a row." — nothing without a goal or a streak. */
export function goalStreakText(goal: Goal): string {
  if (goal.goal === 0 || goal.streak === 0) return "";
  return goal.met ? `Met ${days(goal.streak)} in a row.` : `Met ${days(goal.streak)} in a row up to yesterday.`;
}

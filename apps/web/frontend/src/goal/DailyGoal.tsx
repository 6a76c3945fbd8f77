/** Today's reviews against the learner's daily goal: a bar, the count in words, and the days in a row. */
import type { Goal } from "./goal";
import { goalProgressText, goalStreakText } from "./goal";

export function DailyGoal({ goal, compact = false }: { goal: Goal; compact?: boolean }) {
  const streak = goalStreakText(goal);
  if (compact) {
    return (
      <p class={`goal-line${goal.met ? " goal-met" : ""}`}>
        {goal.goal > 0 && (
          <progress class="goal-bar" max={goal.goal} value={Math.min(goal.reviews_today, goal.goal)} aria-label="Daily goal" />
        )}{" "}
        {goalProgressText(goal)}
      </p>
    );
  }
  return (
    <section class={`card daily-goal${goal.met ? " goal-met" : ""}`} aria-labelledby="daily-goal-title">
      <h2 id="daily-goal-title">Today</h2>
      {goal.goal > 0 && (
        <progress class="goal-bar" max={goal.goal} value={Math.min(goal.reviews_today, goal.goal)} aria-label="Daily goal" />
      )}
      <p>
        {goalProgressText(goal)} {streak}
      </p>
      {goal.goal === 0 && (
        <p>
          <a href="/settings#daily_goal">Set a daily goal</a> to see how far you are each day.
        </p>
      )}
    </section>
  );
}

/** The parts of a Match the Pairs screen: choosing a board's size, the status bar with its clock, the summary. */
import { useEffect, useState } from "preact/hooks";
import { plural } from "../format";
import * as G from "./game";

export function Setup({
  cards,
  pairs,
  onPairs,
  starting,
  onStart,
}: {
  cards: number;
  pairs: number;
  onPairs: (pairs: number) => void;
  starting: boolean;
  onStart: () => void;
}) {
  const { sizes } = G.pairChoices(cards);
  if (sizes.length === 0) {
    return (
      <div class="alert alert-info" role="status">
        <p>This deck has too few cards for a board: it needs at least two.</p>
      </div>
    );
  }
  return (
    <form
      class="card match-setup"
      onSubmit={(event) => {
        event.preventDefault();
        onStart();
      }}
    >
      <p>
        Match each term with its definition as fast as you can. The server keeps the time; every wrong pair adds a
        penalty. Lower scores are better.
      </p>
      <div class="field match-size">
        <label for="match-pairs">Pairs on the board</label>
        <select
          id="match-pairs"
          value={String(pairs)}
          onChange={(event) => onPairs(Number((event.currentTarget as HTMLSelectElement).value))}
        >
          {sizes.map((size) => (
            <option key={size} value={String(size)}>
              {size}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" class="button primary big" disabled={starting}>
        {starting ? "Starting…" : "Start"}
      </button>
    </form>
  );
}

export function StatusBar({ game, clock }: { game: G.Game; clock: G.Clock }) {
  return (
    <div class="match-status" role="group" aria-label="Board status">
      <p class="match-stat">
        <span class="match-stat-label">Time</span>
        <Ticker clock={clock} running={clock.stoppedMs === null} />
      </p>
      <p class="match-stat">
        <span class="match-stat-label">Penalties</span>
        <span class="match-stat-value">
          {G.formatPenalty(game.penaltyMs)}
          <span class="match-stat-sub"> ({plural(game.wrongAttempts, "wrong try", "wrong tries")})</span>
        </span>
      </p>
      <p class="match-stat">
        <span class="match-stat-label">Matched</span>
        <span class="match-stat-value">
          {game.matched} / {game.pairs}
        </span>
      </p>
    </div>
  );
}

/** The running clock; only it re-renders ten times a second. */
function Ticker({ clock, running }: { clock: G.Clock; running: boolean }) {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(timer);
  }, [running, clock]);
  const ms = G.clockRead(clock, running ? now : performance.now());
  return (
    <span class="match-stat-value match-clock" role="timer" aria-label={`Time ${G.describeClock(ms)}`}>
      {G.formatClock(ms)}
    </span>
  );
}

export function FinishedSummary({
  game,
  score,
  headingRef,
}: {
  game: G.Game;
  score: G.Score;
  headingRef: { current: HTMLHeadingElement | null };
}) {
  return (
    <section class="card match-finished" aria-labelledby="match-finished-title">
      <h2 id="match-finished-title" tabIndex={-1} ref={headingRef}>
        All pairs matched
      </h2>
      <p class="match-score">
        <span class="match-score-label">Score</span>{" "}
        <span class="match-score-value" data-score-ms={String(score.score_ms)}>
          {G.formatClock(score.score_ms)}
        </span>
        {score.personal_best && <span class="match-best-badge">Personal best!</span>}
      </p>
      <dl class="match-breakdown">
        <div>
          <dt>Time</dt>
          <dd>{G.formatClock(score.elapsed_ms)}</dd>
        </div>
        <div>
          <dt>Penalties</dt>
          <dd>
            {G.formatPenalty(score.penalty_ms)} ({plural(game.wrongAttempts, "wrong try", "wrong tries")})
          </dd>
        </div>
        <div>
          <dt>Pairs</dt>
          <dd>{game.pairs}</dd>
        </div>
      </dl>
      <details class="match-pairs-list">
        <summary>The pairs</summary>
        <ul>
          {game.earned.map((pair) => (
            <li key={pair.term}>
              <strong>{pair.term}</strong>: {pair.definition}
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}

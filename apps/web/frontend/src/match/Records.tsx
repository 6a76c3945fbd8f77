/** The learner's own boards on a deck, and the deck's leaderboard with the choice to appear on it. */
import { useState } from "preact/hooks";
import { call, client } from "../api/client";
import { describeError, fieldErrors } from "../api/errors";
import { Await } from "../components/common";
import { Field } from "../components/Field";
import { formatMoment, plural } from "../format";
import { useLoad } from "../hooks";
import { setMe, useSession } from "../session";
import { formatClock, formatPenalty } from "./game";

const RECENT = 5;


export function Records({ slug, pairs }: { slug: string; pairs: number }) {
  const [history, retryHistory] = useLoad(
    () =>
      call(
        client.GET("/api/v1/decks/{slug}/match/history/", {
          params: { path: { slug }, query: { page_size: RECENT } },
        }),
      ),
    [slug],
  );
  const [board, retryBoard] = useLoad(
    () =>
      call(client.GET("/api/v1/decks/{slug}/match/leaderboard/", { params: { path: { slug }, query: { pairs } } })),
    [slug, pairs],
  );
  return (
    <div class="match-records">
      <section class="card" aria-labelledby="match-history-title">
        <h2 id="match-history-title">Your boards</h2>
        <Await value={history} retry={retryHistory}>
          {(data) =>
            data.results.length === 0 ? (
              <p class="meta">No finished boards on this deck yet. Your scores will show here.</p>
            ) : (
              <>
                {data.best.length > 0 && (
                  <>
                    <h3>Personal bests</h3>
                    <ul class="match-bests">
                      {data.best.map((best) => (
                        <li key={best.pairs}>
                          <strong>{plural(best.pairs, "pair", "pairs")}</strong>: {formatClock(best.score_ms)}{" "}
                          <span class="meta">({plural(best.boards_count, "board", "boards")} played)</span>
                        </li>
                      ))}
                    </ul>
                  </>
                )}
                <h3 id="match-recent-title">Recent boards</h3>
                {/* Focusable so the table can be scrolled sideways by keyboard on a narrow screen. */}
                <div class="match-table-wrap" tabIndex={0} role="region" aria-labelledby="match-recent-title">
                  <table class="match-table">
                    <thead>
                      <tr>
                        <th scope="col">Finished</th>
                        <th scope="col">Pairs</th>
                        <th scope="col">Score</th>
                        <th scope="col">Time</th>
                        <th scope="col">Penalty</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.results.slice(0, RECENT).map((row) => (
                        <tr key={row.id}>
                          <td>{formatMoment(row.finished_at)}</td>
                          <td>{row.pairs}</td>
                          <td>
                            {formatClock(row.score_ms)}
                            {row.personal_best && <span class="match-best-mark"> (new best)</span>}
                          </td>
                          <td>{formatClock(row.elapsed_ms)}</td>
                          <td>
                            {formatPenalty(row.penalty_ms)}
                            <span class="visually-hidden"> for {plural(row.wrong_attempts, "wrong try", "wrong tries")}</span>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </>
            )
          }
        </Await>
      </section>
      <section class="card" aria-labelledby="match-leaderboard-title">
        <h2 id="match-leaderboard-title">Leaderboard ({plural(pairs, "pair", "pairs")})</h2>
        <Await value={board} retry={retryBoard}>
          {(data) => (
            <>
              {data.results.length === 0 ? (
                <p class="meta">Nobody is on this leaderboard yet.</p>
              ) : (
                <ol class="match-leaderboard">
                  {data.results.map((entry) => (
                    <li key={entry.rank} class={data.me?.rank === entry.rank ? "is-me" : undefined}>
                      <span class="match-rank">{entry.rank}.</span>
                      <span class="match-name">{entry.display_name}</span>
                      <span class="match-entry-score">{formatClock(entry.score_ms)}</span>
                    </li>
                  ))}
                </ol>
              )}
              {data.me !== null && (
                <p class="match-my-place">
                  Your place: {data.me.rank}, with {formatClock(data.me.score_ms)}.
                </p>
              )}
            </>
          )}
        </Await>
        <OptIn onSaved={retryBoard} />
      </section>
    </div>
  );
}

function OptIn({ onSaved }: { onSaved: () => void }) {
  const session = useSession();
  const me = session.status === "signed-in" ? session.me : null;
  const [show, setShow] = useState(me?.show_on_leaderboards ?? false);
  const [name, setName] = useState(me?.display_name ?? "");
  const [saving, setSaving] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  if (me === null) return null;
  const unchanged = show === me.show_on_leaderboards && name.trim() === me.display_name;
  return (
    <form
      class="match-optin"
      onSubmit={async (event) => {
        event.preventDefault();
        setSaving(true);
        setFailure(null);
        setSaved(false);
        try {
          const updated = await call(
            client.PATCH("/api/v1/me/", { body: { show_on_leaderboards: show, display_name: name.trim() } }),
          );
          setMe(updated);
          setSaved(true);
          onSaved();
        } catch (caught) {
          setFailure(caught);
        } finally {
          setSaving(false);
        }
      }}
    >
      <h3>Appear on leaderboards</h3>
      <p class="hint" id="match-optin-hint">
        Leaderboards show a display name, never your username or email, so you need one to appear. Your best score
        at each board size is listed.
      </p>
      <div class="match-check">
        <input
          id="match-optin-show"
          type="checkbox"
          checked={show}
          aria-describedby="match-optin-hint"
          onChange={(event) => setShow((event.currentTarget as HTMLInputElement).checked)}
        />
        <label for="match-optin-show">Show me on leaderboards</label>
      </div>
      <Field
        name="display_name"
        label="Display name"
        value={name}
        onInput={setName}
        required={show}
        autoComplete="nickname"
        errors={fieldErrors(failure, "display_name")}
      />
      {failure !== null && fieldErrors(failure, "display_name").length === 0 && (
        <p class="field-errors" role="alert">
          {describeError(failure)}
        </p>
      )}
      <button type="submit" class="button secondary" disabled={saving || unchanged}>
        {saving ? "Saving…" : "Save"}
      </button>
      <p class="meta" role="status">
        {saved ? (me.show_on_leaderboards ? `Saved. You appear as “${me.display_name}”.` : "Saved. You are not listed.") : ""}
      </p>
    </form>
  );
}

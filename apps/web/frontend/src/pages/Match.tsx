/** Match the Pairs: pick a term and its definition until every pair is matched, against the server's clock. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { ApiProblem, describeError, isNetworkFailure } from "../api/errors";
import { ErrorMessage, Loading, PageTitle } from "../components/common";
import { plural } from "../format";
import { useTitle } from "../hooks";
import * as G from "../match/game";
import { Records } from "../match/Records";
import { FinishedSummary, Setup, StatusBar } from "../match/parts";

type Phase = "setup" | "playing" | "finished";

interface Pending {
  pair: { term_id: string; definition_id: string };
  attemptId: string;
}

const BOARD_KEY = "quizsite.match.";

function rememberBoard(slug: string, boardId: string | null): void {
  try {
    if (boardId === null) sessionStorage.removeItem(BOARD_KEY + slug);
    else sessionStorage.setItem(BOARD_KEY + slug, boardId);
  } catch {
    // Only resuming after a reload is lost.
  }
}

function rememberedBoard(slug: string): string | null {
  try {
    return sessionStorage.getItem(BOARD_KEY + slug);
  } catch {
    return null;
  }
}

function tileKey(side: G.Side, id: string): string {
  return `${side}:${id}`;
}

export default function Match({ slug }: { slug: string }) {
  const [deck, setDeck] = useState<{ title: string; cards: number } | null>(null);
  const [deckError, setDeckError] = useState<string | null>(null);
  const [phase, setPhase] = useState<Phase>("setup");
  const [game, setGame] = useState<G.Game | null>(null);
  const [clock, setClock] = useState<G.Clock>(() => G.stoppedClock(0));
  const [pairs, setPairs] = useState(6);
  const [starting, setStarting] = useState(false);
  const [resuming, setResuming] = useState(() => rememberedBoard(slug) !== null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const tileRefs = useRef(new Map<string, HTMLButtonElement>());
  const resultHeading = useRef<HTMLHeadingElement>(null);
  const title = deck?.title ?? slug;
  useTitle(`Match the pairs: ${title}`);

  const loadDeck = useCallback(() => {
    setDeckError(null);
    call(client.GET("/api/v1/decks/{slug}/", { params: { path: { slug } } })).then(
      (found) => {
        setDeck({ title: found.title, cards: found.card_count });
        setPairs(G.pairChoices(found.card_count).initial);
      },
      (caught: unknown) => setDeckError(describeError(caught)),
    );
  }, [slug]);

  useEffect(() => loadDeck(), [loadDeck]);

  // A board left playing by a reload is taken up again, on the server's clock.
  useEffect(() => {
    const boardId = rememberedBoard(slug);
    if (boardId === null) return;
    const sent = performance.now();
    call(client.GET("/api/v1/match/{board_id}/", { params: { path: { board_id: boardId } } })).then(
      (board) => {
        if (board.status === "playing") {
          setGame(G.gameFromState(board));
          setClock(G.clockFrom(board.elapsed_ms, sent, performance.now()));
          setPhase("playing");
        } else rememberBoard(slug, null);
        setResuming(false);
      },
      () => {
        rememberBoard(slug, null);
        setResuming(false);
      },
    );
  }, [slug]);

  const start = useCallback(async (size: number) => {
    if (starting) return;
    setStarting(true);
    setError(null);
    const sent = performance.now();
    try {
      const board = await call(
        client.POST("/api/v1/decks/{slug}/match/", { params: { path: { slug } }, body: { pairs: size } }),
      );
      setClock(G.clockFrom(0, sent, performance.now()));
      setGame(G.gameFromStart(board));
      setPending(null);
      setAnnouncement(`Board started with ${plural(board.pairs, "pair", "pairs")}. The clock is running.`);
      setPhase("playing");
      rememberBoard(slug, board.id);
      requestAnimationFrame(() => {
        const first = board.terms[0];
        if (first) tileRefs.current.get(tileKey("term", first.id))?.focus();
      });
    } catch (caught) {
      setError(describeError(caught));
    } finally {
      setStarting(false);
    }
  }, [slug, starting]);

  const focusAfterMatch = useCallback((next: G.Game, side: G.Side, index: number) => {
    requestAnimationFrame(() => {
      if (G.isFinished(next)) {
        resultHeading.current?.focus();
        return;
      }
      const list = G.tiles(next, side);
      const open = G.nearestOpen(list, index);
      const tile = open === null ? undefined : list[open];
      if (tile) tileRefs.current.get(tileKey(side, tile.id))?.focus();
    });
  }, []);

  const send = useCallback(
    async (current: G.Game, attempt: Pending) => {
      setPending(attempt);
      setError(null);
      const sent = performance.now();
      const focused = document.activeElement;
      let focusedSide: G.Side = "term";
      let focusedIndex = 0;
      for (const side of ["term", "definition"] as const) {
        G.tiles(current, side).forEach((tile, index) => {
          if (tileRefs.current.get(tileKey(side, tile.id)) === focused) {
            focusedSide = side;
            focusedIndex = index;
          }
        });
      }
      try {
        const result = await call(
          client.POST("/api/v1/match/{board_id}/attempts/", {
            params: { path: { board_id: current.boardId } },
            body: { ...attempt.pair, client_attempt_id: attempt.attemptId },
          }),
        );
        const next = G.answered(current, attempt.pair, result);
        setGame(next);
        setPending(null);
        if (result.score !== null) {
          setClock(G.stoppedClock(result.score.elapsed_ms));
          setPhase("finished");
          rememberBoard(slug, null);
          setAnnouncement(`All pairs matched. Your score is ${G.describeClock(result.score.score_ms)}.`);
        } else {
          setClock(G.clockFrom(result.elapsed_ms, sent, performance.now()));
          if (result.correct && result.pair) {
            setAnnouncement(`Right: ${result.pair.term} is matched. ${result.remaining} left.`);
          } else {
            setAnnouncement(`Not a pair. ${G.formatPenalty(current.penaltyPerWrongMs)} penalty.`);
          }
        }
        if (result.correct) focusAfterMatch(next, focusedSide, focusedIndex);
      } catch (caught) {
        if (caught instanceof ApiProblem && (caught.code === "board_expired" || caught.code === "board_finished")) {
          setPending(null);
          rememberBoard(slug, null);
          setPhase("setup");
          setGame(null);
          setError(describeError(caught));
          return;
        }
        if (caught instanceof ApiProblem && caught.code === "already_matched") {
          // Matched by an earlier answer that never arrived here: read the board as it is.
          setPending(null);
          try {
            const board = await call(
              client.GET("/api/v1/match/{board_id}/", { params: { path: { board_id: current.boardId } } }),
            );
            setGame(G.gameFromState(board));
          } catch (again) {
            setError(describeError(again));
          }
          return;
        }
        if (isNetworkFailure(caught)) {
          // Kept with its id: sent again, the server records it at most once.
          setError("Your try did not reach the server. Check your connection and send it again.");
          return;
        }
        setPending(null);
        setGame({ ...current, selected: { term: null, definition: null } });
        setError(describeError(caught));
      }
    },
    [focusAfterMatch, slug],
  );

  const choose = useCallback(
    (side: G.Side, id: string) => {
      if (!game || pending !== null || phase !== "playing") return;
      const next = G.select(G.clearWrong(game), side, id);
      setGame(next);
      const pair = G.readyPair(next);
      if (pair) void send(next, { pair, attemptId: G.newAttemptId() });
    },
    [game, pending, phase, send],
  );

  // A wrong try shows for a moment, then the tiles are plain again.
  useEffect(() => {
    if (!game?.wrong) return;
    const timer = setTimeout(() => setGame((g) => (g ? G.clearWrong(g) : g)), 1200);
    return () => clearTimeout(timer);
  }, [game?.wrong]);

  function onTileKey(event: KeyboardEvent, side: G.Side, index: number) {
    if (!game) return;
    const target = G.moveFocus(game, { side, index }, event.key);
    if (target === null) return;
    const tile = G.tiles(game, target.side)[target.index];
    if (!tile) return;
    event.preventDefault();
    tileRefs.current.get(tileKey(target.side, tile.id))?.focus();
  }

  if (deckError !== null && deck === null) {
    return (
      <section class="match">
        <PageTitle>Match the pairs</PageTitle>
        <ErrorMessage message={deckError} onRetry={loadDeck} />
      </section>
    );
  }
  if (deck === null || resuming) {
    return (
      <section class="match">
        <PageTitle>Match the pairs</PageTitle>
        <Loading label="Loading the deck…" />
      </section>
    );
  }

  return (
    <div class="match">
      <PageTitle>Match the pairs: {deck.title}</PageTitle>
      {phase === "setup" && (
        <Setup
          cards={deck.cards}
          pairs={pairs}
          onPairs={setPairs}
          starting={starting}
          onStart={() => void start(pairs)}
        />
      )}
      {error !== null && (
        <ErrorMessage
          message={error}
          onRetry={pending !== null && game !== null ? () => void send(game, pending) : undefined}
        />
      )}
      {game !== null && phase !== "setup" && (
        <>
          {phase === "playing" && <StatusBar game={game} clock={clock} />}
          {phase === "finished" && game.score !== null && (
            <FinishedSummary game={game} score={game.score} headingRef={resultHeading} />
          )}
          {phase === "playing" && (
            <>
              <p class="match-rule meta">
                Pick a term, then its definition (in either order). Arrow keys move between tiles; Enter or Space picks.{" "}
                {game.penaltyRule}
              </p>
              <div class="match-board" aria-busy={pending !== null ? "true" : undefined}>
                {(["term", "definition"] as const).map((side) => (
                  <section class="match-column" aria-labelledby={`match-${side}s`} key={side}>
                    <h2 id={`match-${side}s`} class="match-column-title">
                      {side === "term" ? "Terms" : "Definitions"}
                    </h2>
                    <ul class="match-tiles">
                      {G.tiles(game, side).map((tile, index) => {
                        const selected = game.selected[side] === tile.id;
                        const wrong = game.wrong?.[side] === tile.id;
                        const classes = ["match-tile", `match-${side}`];
                        if (selected) classes.push("is-selected");
                        if (wrong) classes.push("is-wrong");
                        if (tile.matched) classes.push("is-matched");
                        return (
                          <li key={tile.id}>
                            <button
                              type="button"
                              class={classes.join(" ")}
                              ref={(element) => {
                                if (element) tileRefs.current.set(tileKey(side, tile.id), element);
                                else tileRefs.current.delete(tileKey(side, tile.id));
                              }}
                              aria-pressed={tile.matched ? undefined : selected ? "true" : "false"}
                              disabled={tile.matched}
                              data-tile-id={tile.id}
                              onClick={() => choose(side, tile.id)}
                              onKeyDown={(event) => onTileKey(event, side, index)}
                            >
                              <span class="match-tile-text">{tile.text}</span>
                              {tile.matched && <span class="visually-hidden"> (matched)</span>}
                              {wrong && (
                                <span class="match-tile-penalty" aria-hidden="true">
                                  {G.formatPenalty(game.penaltyPerWrongMs)}
                                </span>
                              )}
                            </button>
                          </li>
                        );
                      })}
                    </ul>
                  </section>
                ))}
              </div>
              {game.wrong !== null && (
                <p class="match-wrong-note" aria-hidden="true">
                  Not a pair: {G.formatPenalty(game.penaltyPerWrongMs)} added.
                </p>
              )}
            </>
          )}
          {phase === "finished" && (
            <p class="match-actions">
              <button type="button" class="button primary" disabled={starting} onClick={() => void start(game.pairs)}>
                Play again ({plural(game.pairs, "pair", "pairs")})
              </button>
              <button
                type="button"
                class="button secondary"
                onClick={() => {
                  setPhase("setup");
                  setGame(null);
                }}
              >
                Change the board size
              </button>
            </p>
          )}
        </>
      )}
      {phase !== "playing" && (
        <Records
          key={`${phase}-${game?.boardId ?? ""}`}
          slug={slug}
          pairs={phase === "finished" && game ? game.pairs : pairs}
        />
      )}
      <p class="visually-hidden" aria-live="polite">
        {announcement}
      </p>
    </div>
  );
}

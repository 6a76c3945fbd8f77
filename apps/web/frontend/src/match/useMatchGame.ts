/** A Match the Pairs game's state and its talk with the server: the deck, the board, the clock, the tries
 * in flight, what a screen reader is told, and where focus goes as pairs are matched. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { ApiProblem, describeError, isNetworkFailure } from "../api/errors";
import { plural } from "../format";
import * as G from "./game";

export type Phase = "setup" | "playing" | "finished";

export interface Pending {
  pair: { term_id: string; definition_id: string };
  attemptId: string;
}

export interface MatchGame {
  deck: { title: string; cards: number } | null;
  deckError: string | null;
  loadDeck: () => void;
  phase: Phase;
  game: G.Game | null;
  clock: G.Clock;
  pairs: number;
  setPairs: (pairs: number) => void;
  starting: boolean;
  /** A board left playing by a reload is being read again. */
  resuming: boolean;
  error: string | null;
  pending: Pending | null;
  announcement: string;
  start: (size: number) => void;
  choose: (side: G.Side, id: string) => void;
  /** Sends again the try that did not reach the server; undefined when there is none. */
  retry: (() => void) | undefined;
  backToSetup: () => void;
  /** The tiles' buttons by `tileKey`, for moving focus. */
  tileRefs: { current: Map<string, HTMLButtonElement> };
  resultHeading: { current: HTMLHeadingElement | null };
  moveFocus: (event: KeyboardEvent, side: G.Side, index: number) => void;
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

export function tileKey(side: G.Side, id: string): string {
  return `${side}:${id}`;
}

export function useMatchGame(slug: string): MatchGame {
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

  const focusTile = useCallback((side: G.Side, id: string) => {
    tileRefs.current.get(tileKey(side, id))?.focus();
  }, []);

  const start = useCallback(
    async (size: number) => {
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
          if (first) focusTile("term", first.id);
        });
      } catch (caught) {
        setError(describeError(caught));
      } finally {
        setStarting(false);
      }
    },
    [slug, starting, focusTile],
  );

  const focusAfterMatch = useCallback(
    (next: G.Game, side: G.Side, index: number) => {
      requestAnimationFrame(() => {
        if (G.isFinished(next)) {
          resultHeading.current?.focus();
          return;
        }
        const list = G.tiles(next, side);
        const open = G.nearestOpen(list, index);
        const tile = open === null ? undefined : list[open];
        if (tile) focusTile(side, tile.id);
      });
    },
    [focusTile],
  );

  /** The side and place of the tile that has focus, where focus goes back after a match. */
  const focusedTile = useCallback((current: G.Game): { side: G.Side; index: number } => {
    const focused = document.activeElement;
    for (const side of ["term", "definition"] as const) {
      const index = G.tiles(current, side).findIndex((tile) => tileRefs.current.get(tileKey(side, tile.id)) === focused);
      if (index >= 0) return { side, index };
    }
    return { side: "term", index: 0 };
  }, []);

  const send = useCallback(
    async (current: G.Game, attempt: Pending) => {
      setPending(attempt);
      setError(null);
      const sent = performance.now();
      const focus = focusedTile(current);
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
        if (result.correct) focusAfterMatch(next, focus.side, focus.index);
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
    [focusAfterMatch, focusedTile, slug],
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

  const moveFocus = useCallback(
    (event: KeyboardEvent, side: G.Side, index: number) => {
      if (!game) return;
      const target = G.moveFocus(game, { side, index }, event.key);
      if (target === null) return;
      const tile = G.tiles(game, target.side)[target.index];
      if (!tile) return;
      event.preventDefault();
      focusTile(target.side, tile.id);
    },
    [game, focusTile],
  );

  const backToSetup = useCallback(() => {
    setPhase("setup");
    setGame(null);
  }, []);

  return {
    deck,
    deckError,
    loadDeck,
    phase,
    game,
    clock,
    pairs,
    setPairs,
    starting,
    resuming,
    error,
    pending,
    announcement,
    start: (size: number) => void start(size),
    choose,
    retry: pending !== null && game !== null ? () => void send(game, pending) : undefined,
    backToSetup,
    tileRefs,
    resultHeading,
    moveFocus,
  };
}

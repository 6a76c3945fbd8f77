/** Match the Pairs on the client: selection, keyboard moves, the server's answers, and its clock. Pure. */
import type { components } from "../api/schema";

export type StartedBoard = components["schemas"]["MatchBoardStartOutput"];
export type BoardState = components["schemas"]["MatchBoardOutput"];
export type AttemptResult = components["schemas"]["MatchAttemptOutput"];
export type Score = components["schemas"]["MatchScoreOutput"];

export type Side = "term" | "definition";

export interface Tile {
  id: string;
  text: string;
  matched: boolean;
}

export interface Game {
  boardId: string;
  pairs: number;
  penaltyPerWrongMs: number;
  penaltyRule: string;
  terms: Tile[];
  definitions: Tile[];
  selected: { term: string | null; definition: string | null };
  /** The last wrong try, shown until the next try. */
  wrong: { term: string; definition: string } | null;
  matched: number;
  wrongAttempts: number;
  penaltyMs: number;
  score: Score | null;
  /** The pairs earned so far, in order, to read back after the game. */
  earned: { term: string; definition: string }[];
}

export function gameFromStart(board: StartedBoard): Game {
  return {
    boardId: board.id,
    pairs: board.pairs,
    penaltyPerWrongMs: board.penalty_rule.wrong_attempt_penalty_ms,
    penaltyRule: board.penalty_rule.description,
    terms: board.terms.map((item) => ({ ...item, matched: false })),
    definitions: board.definitions.map((item) => ({ ...item, matched: false })),
    selected: { term: null, definition: null },
    wrong: null,
    matched: 0,
    wrongAttempts: 0,
    penaltyMs: 0,
    score: null,
    earned: [],
  };
}

/** A board read back (after a reload) as a game to go on with. */
export function gameFromState(board: BoardState): Game {
  return {
    boardId: board.id,
    pairs: board.pairs,
    penaltyPerWrongMs: board.penalty_rule.wrong_attempt_penalty_ms,
    penaltyRule: board.penalty_rule.description,
    terms: board.terms.map((item) => ({ ...item })),
    definitions: board.definitions.map((item) => ({ ...item })),
    selected: { term: null, definition: null },
    wrong: null,
    matched: board.matched,
    wrongAttempts: board.wrong_attempts,
    penaltyMs: board.penalty_ms,
    score: board.score,
    earned: board.matched_pairs.map((pair) => ({ term: pair.term, definition: pair.definition })),
  };
}

export function tiles(game: Game, side: Side): Tile[] {
  return side === "term" ? game.terms : game.definitions;
}

export function isFinished(game: Game): boolean {
  return game.score !== null;
}

/** Selects a tile, or unselects it when it was selected; matched tiles cannot be chosen. */
export function select(game: Game, side: Side, id: string): Game {
  const tile = tiles(game, side).find((item) => item.id === id);
  if (!tile || tile.matched || isFinished(game)) return game;
  const current = game.selected[side];
  return { ...game, selected: { ...game.selected, [side]: current === id ? null : id } };
}

/** The pair to send, once one term and one definition are selected. */
export function readyPair(game: Game): { term_id: string; definition_id: string } | null {
  const { term, definition } = game.selected;
  return term !== null && definition !== null ? { term_id: term, definition_id: definition } : null;
}

/** The server's answer to a try: a right pair locks in, a wrong one is kept to show; counts are the server's. */
export function answered(game: Game, tried: { term_id: string; definition_id: string }, result: AttemptResult): Game {
  const counts = {
    matched: result.matched,
    wrongAttempts: result.wrong_attempts,
    penaltyMs: result.penalty_ms,
    score: result.score,
    selected: { term: null, definition: null },
  };
  if (result.correct && result.pair) {
    const pair = result.pair;
    return {
      ...game,
      ...counts,
      terms: game.terms.map((item) => (item.id === pair.term_id ? { ...item, matched: true } : item)),
      definitions: game.definitions.map((item) => (item.id === pair.definition_id ? { ...item, matched: true } : item)),
      wrong: null,
      earned: [...game.earned, { term: pair.term, definition: pair.definition }],
    };
  }
  return { ...game, ...counts, wrong: { term: tried.term_id, definition: tried.definition_id } };
}

export function clearWrong(game: Game): Game {
  return game.wrong === null ? game : { ...game, wrong: null };
}

/**
 * Where an arrow key moves focus among the two columns: up and down within a column, skipping
 * matched tiles; left and right to the nearest open tile of the other column at about the same row.
 */
export function moveFocus(
  game: Game,
  from: { side: Side; index: number },
  key: string,
): { side: Side; index: number } | null {
  const list = tiles(game, from.side);
  if (key === "ArrowDown" || key === "ArrowUp") {
    const step = key === "ArrowDown" ? 1 : -1;
    for (let index = from.index + step; index >= 0 && index < list.length; index += step) {
      if (!list[index]?.matched) return { side: from.side, index };
    }
    return null;
  }
  if (key === "Home" || key === "End") {
    const order = list.map((_, index) => index);
    if (key === "End") order.reverse();
    const index = order.find((i) => !list[i]?.matched);
    return index === undefined ? null : { side: from.side, index };
  }
  if (key === "ArrowLeft" || key === "ArrowRight") {
    const side: Side = key === "ArrowRight" ? "definition" : "term";
    if (side === from.side) return null;
    const index = nearestOpen(tiles(game, side), from.index);
    return index === null ? null : { side, index };
  }
  return null;
}

/** The open tile nearest to `index` (below first on a tie), or null when all are matched. */
export function nearestOpen(list: Tile[], index: number): number | null {
  for (let distance = 0; distance < list.length + index + 1; distance++) {
    for (const candidate of [index + distance, index - distance]) {
      if (candidate >= 0 && candidate < list.length && !list[candidate]?.matched) return candidate;
    }
  }
  return null;
}

// --- The clock ------------------------------------------------------------------------------------

/** The server's elapsed time at a moment of the client's monotonic clock; read by extrapolating. */
export interface Clock {
  elapsedMs: number;
  at: number;
  /** Set once finished: the clock shows this and stops. */
  stoppedMs: number | null;
}

/**
 * Anchors the clock on a server answer: it was `serverElapsedMs` when the server judged the
 * request, which is about half way between sending it and receiving the answer.
 */
export function clockFrom(serverElapsedMs: number, sentAt: number, receivedAt: number): Clock {
  const halfTrip = Math.max(0, (receivedAt - sentAt) / 2);
  return { elapsedMs: serverElapsedMs + halfTrip, at: receivedAt, stoppedMs: null };
}

export function stoppedClock(elapsedMs: number): Clock {
  return { elapsedMs, at: 0, stoppedMs: elapsedMs };
}

export function clockRead(clock: Clock, now: number): number {
  if (clock.stoppedMs !== null) return clock.stoppedMs;
  return Math.max(0, clock.elapsedMs + (now - clock.at));
}

/** "0:07.4", "1:02.0", "1:00:05.0": minutes and seconds to a tenth, the way race times are read. */
export function formatClock(ms: number): string {
  const tenths = Math.floor(Math.max(0, ms) / 100);
  const seconds = Math.floor(tenths / 10);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const rest = `${String(s).padStart(2, "0")}.${tenths % 10}`;
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
}

/** The same time for screen readers: "7.4 seconds", "1 minute 2 seconds". */
export function describeClock(ms: number): string {
  const tenths = Math.floor(Math.max(0, ms) / 100);
  const seconds = Math.floor(tenths / 10);
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  if (m === 0) {
    const value = tenths % 10 === 0 ? String(s) : `${s}.${tenths % 10}`;
    return `${value} ${value === "1" ? "second" : "seconds"}`;
  }
  const minutes = `${m} ${m === 1 ? "minute" : "minutes"}`;
  return s === 0 ? minutes : `${minutes} ${s} ${s === 1 ? "second" : "seconds"}`;
}

/** A penalty as "+5 s" or "+2.5 s". */
export function formatPenalty(ms: number): string {
  return `+${Math.round(ms / 100) / 10} s`;
}

/** The board sizes a deck allows, and the one to offer first. */
export function pairChoices(cardCount: number, min = 2, max = 12): { sizes: number[]; initial: number } {
  const top = Math.min(max, cardCount);
  const sizes: number[] = [];
  for (let size = min; size <= top; size++) sizes.push(size);
  return { sizes, initial: Math.min(6, top) };
}

/** A version 4 UUID from 16 random bytes. */
export function uuidFromBytes(random: Uint8Array): string {
  const bytes = Uint8Array.from(random.subarray(0, 16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** An id that makes a retried try harmless; randomUUID is missing outside secure contexts. */
export function newAttemptId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return uuidFromBytes(crypto.getRandomValues(new Uint8Array(16)));
}

/** A term written as code (an API name such as `output_signature` or `tf.data.AUTOTUNE`), set in monospace;
 * a term in words ("data leakage") is set as text. */
export function isCodeTerm(term: string): boolean {
  return /^[\w.()]+$/.test(term) && /[_.()]|[a-z][A-Z]/.test(term);
}

/** A term cut after each `_`, `.`, `=` and `,`, before a `(`, and between the words of a CamelCase name,
 * where a line may break besides its spaces, so a narrow column never has to break it inside a word. */
export function codeTermParts(term: string): string[] {
  return term.split(/(?<=[_.=,])|(?=\()|(?<=[a-z])(?=[A-Z])/).filter((part) => part !== "");
}

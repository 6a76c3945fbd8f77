/** The study session's state and its transitions, kept free of I/O so they can be tested. */
import type { components } from "./api/schema";

export type StudyItem = components["schemas"]["StudyItemOutput"];
export type Queue = StudyItem["queue"];

export interface Counts {
  learning: number;
  review: number;
  new: number;
}

export interface Done {
  item: StudyItem;
  /** The server's id of the review; null while it waits on this device to be sent. */
  reviewId: number | null;
  clientReviewId: string;
  counts: Counts;
}

export interface StudyState {
  items: StudyItem[];
  counts: Counts;
  flipped: boolean;
  history: Done[];
}

export function countsOf(study: components["schemas"]["StudyOutput"]): Counts {
  return { learning: study.counts.learning_due, review: study.counts.reviews_due, new: study.counts.new_due };
}

export function startState(study: components["schemas"]["StudyOutput"], history: Done[] = []): StudyState {
  return { items: study.cards, counts: countsOf(study), flipped: false, history };
}

export function flip(state: StudyState): StudyState {
  return state.items.length === 0 ? state : { ...state, flipped: true };
}

/** The shown card was reviewed: it leaves the queue and its queue's count drops by one. */
export function reviewed(state: StudyState, reviewId: number | null, clientReviewId: string): StudyState {
  const [item, ...rest] = state.items;
  if (!item) return state;
  const counts = { ...state.counts, [item.queue]: Math.max(0, state.counts[item.queue] - 1) };
  return {
    items: rest,
    counts,
    flipped: false,
    history: [...state.history, { item, reviewId, clientReviewId, counts: state.counts }],
  };
}

/** The latest review of this session, recorded by the server or waiting on this device: either can be undone. */
export function undoable(state: StudyState): Done | null {
  return state.history[state.history.length - 1] ?? null;
}

/** The latest review was undone (on the server, or taken back before it was sent): its card comes back first,
 * with the counts before it. */
export function undone(state: StudyState): StudyState {
  const last = state.history[state.history.length - 1];
  if (!last) return state;
  const items = [last.item, ...state.items.filter((item) => item.card.id !== last.item.card.id)];
  return { items, counts: last.counts, flipped: false, history: state.history.slice(0, -1) };
}

export function remaining(counts: Counts): number {
  return counts.learning + counts.review + counts.new;
}

export type Rating = 1 | 2 | 3 | 4;
export const RATINGS: { rating: Rating; label: string; key: keyof StudyItem["next_intervals"] }[] = [
  { rating: 1, label: "Again", key: "again" },
  { rating: 2, label: "Hard", key: "hard" },
  { rating: 3, label: "Good", key: "good" },
  { rating: 4, label: "Easy", key: "easy" },
];

import { describe, expect, it } from "vitest";
import * as S from "../src/study";

function item(id: number, queue: S.Queue): S.StudyItem {
  return {
    queue,
    card: { id, slug: `c${id}`, term: `t${id}`, definition: "d", example: "", code: "", format: "text", tags: [], anki_guid: "" },
    state: null,
    next_intervals: { again: 60, hard: 330, good: 600, easy: 691200 },
    recall_probability: null,
    recall_computed_at: "2026-01-01T00:00:00Z",
  };
}

const study = {
  deck: "d",
  day_start: "2026-01-01T04:00:00Z",
  day_end: "2026-01-02T04:00:00Z",
  counts: { learning_due: 1, reviews_due: 1, new_due: 1, new_left_today: 20, reviews_left_today: 200 },
  cards: [item(1, "learning"), item(2, "review"), item(3, "new")],
};

describe("study session", () => {
  it("takes the reviewed card off and counts it down in its queue", () => {
    let state = S.flip(S.startState(study));
    expect(state.flipped).toBe(true);
    state = S.reviewed(state, 10, "a");
    expect(state.items.map((i) => i.card.id)).toEqual([2, 3]);
    expect(state.counts).toEqual({ learning: 0, review: 1, new: 1 });
    expect(state.flipped).toBe(false);
  });

  it("undo brings the card back first with the counts before it", () => {
    const start = S.startState(study);
    const after = S.reviewed(S.reviewed(start, 10, "a"), 11, "b");
    expect(S.undoable(after)?.reviewId).toBe(11);
    const back = S.undone(after);
    expect(back.items.map((i) => i.card.id)).toEqual([2, 3]);
    expect(back.counts).toEqual({ learning: 0, review: 1, new: 1 });
    expect(S.undoable(back)?.reviewId).toBe(10);
  });

  it("undoes a review still waiting on this device by its client id, as one the server recorded", () => {
    const state = S.reviewed(S.reviewed(S.startState(study), 10, "a"), null, "b");
    expect(S.undoable(state)).toMatchObject({ reviewId: null, clientReviewId: "b" });
    const back = S.undone(state);
    expect(back.items.map((i) => i.card.id)).toEqual([2, 3]);
    expect(S.undoable(back)).toMatchObject({ reviewId: 10, clientReviewId: "a" });
    expect(S.undoable(S.undone(back))).toBeNull();
  });

  it("keeps the history across a reload of the queue", () => {
    const state = S.reviewed(S.startState(study), 10, "a");
    const reloaded = S.startState({ ...study, cards: [] }, state.history);
    expect(S.undoable(reloaded)?.reviewId).toBe(10);
    expect(S.undone(reloaded).items.map((i) => i.card.id)).toEqual([1]);
  });
});

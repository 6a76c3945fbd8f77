import { describe, expect, it } from "vitest";
import * as G from "../src/match/game";

const started: G.StartedBoard = {
  id: "b1",
  pairs: 3,
  started_at: "2026-03-02T09:00:00Z",
  expires_at: "2026-03-02T10:00:00Z",
  penalty_rule: { wrong_attempt_penalty_ms: 5000, description: "Each wrong attempt adds 5 s." },
  terms: [
    { id: "t1", text: "map" },
    { id: "t2", text: "batch" },
    { id: "t3", text: "cache" },
  ],
  definitions: [
    { id: "d1", text: "Groups samples." },
    { id: "d2", text: "Keeps outputs." },
    { id: "d3", text: "Applies a function." },
  ],
};

function result(overrides: Partial<G.AttemptResult>): G.AttemptResult {
  return {
    correct: false,
    pair: null,
    matched: 0,
    remaining: 3,
    wrong_attempts: 0,
    penalty_ms: 0,
    finished: false,
    elapsed_ms: 0,
    score: null,
    client_attempt_id: null,
    duplicate: false,
    ...overrides,
  };
}

describe("selecting tiles", () => {
  it("needs one of each side before a pair is ready, in either order", () => {
    let game = G.gameFromStart(started);
    game = G.select(game, "definition", "d3");
    expect(G.readyPair(game)).toBeNull();
    game = G.select(game, "term", "t1");
    expect(G.readyPair(game)).toEqual({ term_id: "t1", definition_id: "d3" });
  });

  it("unselects a tile picked twice and replaces one of the same side", () => {
    let game = G.select(G.gameFromStart(started), "term", "t1");
    expect(G.select(game, "term", "t1").selected.term).toBeNull();
    game = G.select(game, "term", "t2");
    expect(game.selected.term).toBe("t2");
  });

  it("ignores matched and unknown tiles", () => {
    const game = G.gameFromStart(started);
    const matched = { ...game, terms: game.terms.map((t) => (t.id === "t1" ? { ...t, matched: true } : t)) };
    expect(G.select(matched, "term", "t1")).toBe(matched);
    expect(G.select(game, "term", "nope")).toBe(game);
  });
});

describe("the server's answers", () => {
  it("locks a right pair in and takes the counts from the server", () => {
    const game = G.select(G.select(G.gameFromStart(started), "term", "t1"), "definition", "d3");
    const pair = { term_id: "t1", definition_id: "d3" };
    const next = G.answered(
      game,
      pair,
      result({
        correct: true,
        pair: { ...pair, card_id: 7, term: "map", definition: "Applies a function." },
        matched: 1,
        remaining: 2,
        elapsed_ms: 1200,
      }),
    );
    expect(next.terms.find((t) => t.id === "t1")?.matched).toBe(true);
    expect(next.definitions.find((d) => d.id === "d3")?.matched).toBe(true);
    expect(next.terms.filter((t) => t.matched)).toHaveLength(1);
    expect(next.selected).toEqual({ term: null, definition: null });
    expect(next.matched).toBe(1);
    expect(next.earned).toEqual([{ term: "map", definition: "Applies a function." }]);
    expect(next.wrong).toBeNull();
  });

  it("keeps a wrong pair to show, with the penalty, and locks nothing", () => {
    const game = G.gameFromStart(started);
    const pair = { term_id: "t1", definition_id: "d1" };
    const next = G.answered(game, pair, result({ wrong_attempts: 1, penalty_ms: 5000 }));
    expect(next.wrong).toEqual({ term: "t1", definition: "d1" });
    expect([next.wrongAttempts, next.penaltyMs]).toEqual([1, 5000]);
    expect(next.terms.some((t) => t.matched)).toBe(false);
    expect(G.clearWrong(next).wrong).toBeNull();
  });

  it("is finished once the server sends a score", () => {
    const game = G.gameFromStart(started);
    const score = { elapsed_ms: 9000, penalty_ms: 5000, score_ms: 14000, personal_best: true };
    const next = G.answered(game, { term_id: "t2", definition_id: "d1" }, result({ correct: true, score }));
    expect(G.isFinished(next)).toBe(true);
    expect(G.select(next, "term", "t3")).toBe(next);
  });
});

describe("arrow keys", () => {
  const game = G.gameFromStart(started);
  const withMatched = { ...game, terms: game.terms.map((t) => (t.id === "t2" ? { ...t, matched: true } : t)) };

  it("moves within a column skipping matched tiles, and stops at the ends", () => {
    expect(G.moveFocus(withMatched, { side: "term", index: 0 }, "ArrowDown")).toEqual({ side: "term", index: 2 });
    expect(G.moveFocus(withMatched, { side: "term", index: 2 }, "ArrowDown")).toBeNull();
    expect(G.moveFocus(withMatched, { side: "term", index: 0 }, "ArrowUp")).toBeNull();
    expect(G.moveFocus(withMatched, { side: "term", index: 2 }, "Home")).toEqual({ side: "term", index: 0 });
  });

  it("crosses to the other column at the nearest open row", () => {
    expect(G.moveFocus(withMatched, { side: "definition", index: 1 }, "ArrowLeft")).toEqual({
      side: "term",
      index: 2,
    });
    expect(G.moveFocus(game, { side: "term", index: 1 }, "ArrowRight")).toEqual({ side: "definition", index: 1 });
    expect(G.moveFocus(game, { side: "term", index: 1 }, "ArrowLeft")).toBeNull();
    expect(G.moveFocus(game, { side: "term", index: 1 }, "a")).toBeNull();
  });

  it("finds no open tile when all are matched", () => {
    expect(G.nearestOpen([{ id: "x", text: "x", matched: true }], 0)).toBeNull();
  });
});

describe("the clock", () => {
  it("starts from the server's time plus half the round trip, then ticks", () => {
    const clock = G.clockFrom(3000, 1000, 1200);
    expect(G.clockRead(clock, 1200)).toBe(3100);
    expect(G.clockRead(clock, 2200)).toBe(4100);
  });

  it("stops at the server's final time", () => {
    expect(G.clockRead(G.stoppedClock(9000), 123456)).toBe(9000);
  });

  it("reads like a race time and in words", () => {
    expect(G.formatClock(7449)).toBe("0:07.4");
    expect(G.formatClock(62000)).toBe("1:02.0");
    expect(G.formatClock(3605000)).toBe("1:00:05.0");
    expect(G.describeClock(7400)).toBe("7.4 seconds");
    expect(G.describeClock(1000)).toBe("1 second");
    expect(G.describeClock(62000)).toBe("1 minute 2 seconds");
    expect(G.formatPenalty(5000)).toBe("+5 s");
    expect(G.formatPenalty(2500)).toBe("+2.5 s");
  });
});

describe("setup", () => {
  it("offers 2 to 12 pairs, at most the deck's cards, 6 first", () => {
    expect(G.pairChoices(20)).toEqual({ sizes: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], initial: 6 });
    expect(G.pairChoices(4)).toEqual({ sizes: [2, 3, 4], initial: 4 });
    expect(G.pairChoices(1).sizes).toEqual([]);
  });

  it("makes version 4 ids from random bytes", () => {
    const id = G.uuidFromBytes(new Uint8Array(16).fill(255));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(G.newAttemptId()).not.toBe(G.newAttemptId());
  });
});

describe("code terms", () => {
  it("tells an API name from a term in words", () => {
    expect(["output_signature", "tf.data.AUTOTUNE", "from_generator()", "numParallelCalls"].map(G.isCodeTerm)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(["data leakage", "prefetch", "Shuffle buffer", "batch"].map(G.isCodeTerm)).toEqual([false, false, false, false]);
  });

  it("cuts a code term only after _ and . and between CamelCase words", () => {
    expect(G.codeTermParts("output_signature")).toEqual(["output_", "signature"]);
    expect(G.codeTermParts("tf.data.Dataset.from_tensor_slices")).toEqual(["tf.", "data.", "Dataset.", "from_", "tensor_", "slices"]);
    expect(G.codeTermParts("prefetch")).toEqual(["prefetch"]);
    expect(G.codeTermParts("TFRecordDataset")).toEqual(["TFRecord", "Dataset"]);
    expect(G.codeTermParts("deterministic=False")).toEqual(["deterministic=", "False"]);
    expect(G.codeTermParts("shard(n,i)")).toEqual(["shard", "(n,", "i)"]);
  });
});

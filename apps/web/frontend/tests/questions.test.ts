import { describe, expect, it } from "vitest";
import {
  buildAnswer,
  choiceMark,
  correctAnswerText,
  emptyDraft,
  gradeHeadline,
  parseNumber,
  scheduleNote,
  toggleChoice,
  type Graded,
  type Question,
} from "../src/questions/answer";

function question(kind: Question["kind"], keys: string[] = []): Question {
  return {
    slug: "q",
    kind,
    prompt: "Which?",
    board: "B".repeat(16),
    choices: keys.map((key) => ({ key, text: `text ${key}` })),
  };
}

const key = { choices: [] as string[], accepted_answers: [] as string[], number: null, tolerance: null };

describe("buildAnswer", () => {
  it("sends a single choice with the board it was shown with", () => {
    expect(buildAnswer(question("single_choice", ["x", "y"]), { ...emptyDraft, choice: "y" })).toEqual({
      ok: true,
      body: { board: "B".repeat(16), choice: "y" },
    });
  });

  it("asks for a pick before sending a choice question", () => {
    expect(buildAnswer(question("single_choice", ["x"]), emptyDraft)).toEqual({
      ok: false,
      message: "Pick an answer first.",
    });
    expect(buildAnswer(question("multiple_choice", ["x"]), emptyDraft).ok).toBe(false);
  });

  it("sends every picked choice of a multiple-choice question", () => {
    const built = buildAnswer(question("multiple_choice", ["x", "y", "z"]), { ...emptyDraft, choices: ["x", "z"] });
    expect(built).toEqual({ ok: true, body: { board: "B".repeat(16), choices: ["x", "z"] } });
  });

  it("sends text as typed, but not blank text", () => {
    expect(buildAnswer(question("short_text"), { ...emptyDraft, text: " TFRecord " })).toEqual({
      ok: true,
      body: { text: " TFRecord " },
    });
    expect(buildAnswer(question("short_text"), { ...emptyDraft, text: "   " }).ok).toBe(false);
  });

  it("sends numbers as numbers and refuses what is not one", () => {
    expect(buildAnswer(question("numeric"), { ...emptyDraft, number: "2,5" })).toEqual({
      ok: true,
      body: { number: 2.5 },
    });
    const refused = buildAnswer(question("numeric"), { ...emptyDraft, number: "twelve" });
    expect(refused.ok).toBe(false);
    expect(buildAnswer(question("numeric"), emptyDraft)).toEqual({ ok: false, message: "Type a number first." });
  });
});

describe("parseNumber", () => {
  it.each([
    ["32", 32],
    [" -0.5 ", -0.5],
    ["1,5", 1.5],
    [".25", 0.25],
    ["1e3", 1000],
    ["1 000", 1000],
  ])("%s is %d", (raw, value) => {
    expect(parseNumber(raw)).toBe(value);
  });

  it.each(["", "abc", "1.2.3", "Infinity", "NaN", "0x10", "1e999"])("%s is not a number", (raw) => {
    expect(parseNumber(raw)).toBeNull();
  });
});

describe("toggleChoice", () => {
  it("keeps the shown order whatever the order of clicks", () => {
    const q = question("multiple_choice", ["a", "b", "c"]);
    expect(toggleChoice(q, ["c"], "a")).toEqual(["a", "c"]);
    expect(toggleChoice(q, ["a", "c"], "a")).toEqual(["c"]);
  });
});

describe("the grade in words", () => {
  it("says correct, partly right with the credit, or not quite", () => {
    expect(gradeHeadline({ outcome: "correct", credit: 1 })).toBe("Correct.");
    expect(gradeHeadline({ outcome: "partial", credit: 0.5 })).toBe("Partly right: 50% credit.");
    expect(gradeHeadline({ outcome: "wrong", credit: 0 })).toBe("Not quite.");
  });

  it("names the correct choices by their text, in the shown order", () => {
    const q = question("multiple_choice", ["a", "b", "c"]);
    expect(correctAnswerText(q, { correct_answer: { ...key, choices: ["c", "a"] } })).toBe(
      "The answers: text a; text c",
    );
    expect(correctAnswerText(question("single_choice", ["a"]), { correct_answer: { ...key, choices: ["a"] } })).toBe(
      "The answer: text a",
    );
  });

  it("gives accepted answers and numbers with their tolerance", () => {
    expect(
      correctAnswerText(question("short_text"), { correct_answer: { ...key, accepted_answers: ["TFRecord", "Parquet"] } }),
    ).toBe("Accepted answers: TFRecord, Parquet");
    expect(correctAnswerText(question("numeric"), { correct_answer: { ...key, number: 32, tolerance: 0 } })).toBe(
      "The answer: 32",
    );
    expect(correctAnswerText(question("numeric"), { correct_answer: { ...key, number: 0.3, tolerance: 0.05 } })).toBe(
      "The answer: 0.3 (± 0.05)",
    );
  });

  it("marks the learner's picks and the key", () => {
    const graded: Pick<Graded, "response" | "correct_answer"> = {
      response: { choices: ["a", "c"] },
      correct_answer: { ...key, choices: ["a", "b"] },
    };
    expect(["a", "b", "c", "d"].map((choice) => choiceMark(choice, graded))).toEqual([
      "correct-picked",
      "correct-missed",
      "wrong-picked",
      "none",
    ]);
    expect(choiceMark("a", { response: { choice: "a" }, correct_answer: { ...key, choices: ["b"] } })).toBe(
      "wrong-picked",
    );
  });

  it("says whether the answer was saved to the reviews or as practice", () => {
    const now = Date.parse("2026-05-04T10:00:00Z");
    expect(scheduleNote({ scheduled: true, due: "2026-05-04T10:10:00Z" }, now)).toBe(
      "Saved to your reviews: this question comes back in 10 minutes.",
    );
    expect(scheduleNote({ scheduled: false, due: "2026-05-07T10:00:00Z" }, now)).toBe(
      "Saved as practice: it is already scheduled, and comes back for review in 3 days.",
    );
    expect(scheduleNote({ scheduled: true, due: null }, now)).toBe("Saved to your reviews.");
  });
});

import { describe, expect, it } from "vitest";
import * as Q from "../src/quiz/logic";

function question(kind: Q.Question["kind"], slug: string = kind): Q.Question {
  const choices =
    kind === "single_choice" || kind === "multiple_choice"
      ? [
          { key: "id-x", text: "Prefetch" },
          { key: "id-y", text: "Cache" },
          { key: "id-z", text: "Batch" },
          { key: "id-w", text: "Shuffle" },
        ]
      : [];
  return { id: 1, slug, kind, prompt: "Which?", choices };
}

function graded(overrides: Partial<Q.Graded>): Q.Graded {
  return {
    question: "q",
    response: {},
    correct: false,
    credit: 0,
    explanation: "Because.",
    correct_answer: { choices: [], accepted_answers: [], number: null, tolerance: null },
    answered_at: "2026-01-01T10:00:00Z",
    client_answer_id: null,
    ...overrides,
  };
}

describe("parseNumber", () => {
  it("reads the ways people type numbers", () => {
    expect(Q.parseNumber("12")).toBe(12);
    expect(Q.parseNumber(" -0.5 ")).toBe(-0.5);
    expect(Q.parseNumber("12,5")).toBe(12.5);
    expect(Q.parseNumber("1e3")).toBe(1000);
    expect(Q.parseNumber("1 000")).toBe(1000);
    expect(Q.parseNumber(".5")).toBe(0.5);
    expect(Q.parseNumber("\u22123")).toBe(-3);
  });

  it("refuses what is not one finite number", () => {
    for (const text of ["", "abc", "1.2.3", "1,2,3", "1,000.5", "12ms", "Infinity", "NaN", "1e999", "0x10"]) {
      expect(Q.parseNumber(text), text).toBeNull();
    }
  });
});

describe("buildAnswer", () => {
  it("sends the field of each kind", () => {
    expect(Q.buildAnswer(question("single_choice"), { ...Q.EMPTY_DRAFT, choice: "id-y" })).toEqual({
      ok: true,
      body: { question: "single_choice", choice: "id-y" },
    });
    expect(Q.buildAnswer(question("short_text"), { ...Q.EMPTY_DRAFT, text: "  TFRecord " })).toEqual({
      ok: true,
      body: { question: "short_text", text: "TFRecord" },
    });
    expect(Q.buildAnswer(question("numeric"), { ...Q.EMPTY_DRAFT, text: "12,5" })).toEqual({
      ok: true,
      body: { question: "numeric", number: 12.5 },
    });
  });

  it("sends picked choices once each, in the order shown", () => {
    const built = Q.buildAnswer(question("multiple_choice"), { ...Q.EMPTY_DRAFT, choices: ["id-z", "id-x", "id-z"] });
    expect(built).toEqual({ ok: true, body: { question: "multiple_choice", choices: ["id-x", "id-z"] } });
  });

  it("says what is missing instead of sending", () => {
    expect(Q.buildAnswer(question("single_choice"), Q.EMPTY_DRAFT)).toEqual({ ok: false, message: "Choose one answer." });
    expect(Q.buildAnswer(question("single_choice"), { ...Q.EMPTY_DRAFT, choice: "a" }).ok).toBe(false);
    expect(Q.buildAnswer(question("multiple_choice"), { ...Q.EMPTY_DRAFT, choices: ["nope"] }).ok).toBe(false);
    expect(Q.buildAnswer(question("short_text"), { ...Q.EMPTY_DRAFT, text: "   " }).ok).toBe(false);
    const numeric = Q.buildAnswer(question("numeric"), { ...Q.EMPTY_DRAFT, text: "twelve" });
    expect(numeric.ok).toBe(false);
    expect(numeric.ok ? "" : numeric.message).toMatch(/not a number/);
  });

  it("keys the same answer the same way, a different one differently", () => {
    const a = Q.buildAnswer(question("numeric"), { ...Q.EMPTY_DRAFT, text: "12" });
    const b = Q.buildAnswer(question("numeric"), { ...Q.EMPTY_DRAFT, text: " 12 " });
    const c = Q.buildAnswer(question("numeric"), { ...Q.EMPTY_DRAFT, text: "13" });
    if (!a.ok || !b.ok || !c.ok) throw new Error("built");
    expect(Q.answerKey(a.body)).toBe(Q.answerKey(b.body));
    expect(Q.answerKey(a.body)).not.toBe(Q.answerKey(c.body));
  });
});

describe("grading summaries", () => {
  it("says partial credit of a multiple-choice answer as picks and credit", () => {
    const q = question("multiple_choice");
    const key = { choices: ["id-x", "id-y", "id-z"], accepted_answers: [], number: null, tolerance: null };
    const twoOfThree = graded({ response: { choices: ["id-x", "id-y"] }, credit: 2 / 3, correct_answer: key });
    expect(Q.partialSummary(q, twoOfThree)).toBe("2 of the 3 correct choices picked");
    expect(Q.creditLine(q, twoOfThree)).toBe("Credit: 0.67 of 1 (2 of the 3 correct choices picked)");
    expect(Q.verdictOf(twoOfThree)).toBe("partial");
    const withWrong = graded({ response: { choices: ["id-x", "id-y", "id-z", "id-w"] }, credit: 2 / 3, correct_answer: key });
    expect(Q.partialSummary(q, withWrong)).toBe("3 of the 3 correct choices picked, and 1 wrong one");
    const noneRight = graded({ response: { choices: ["id-w"] }, credit: 0, correct_answer: key });
    expect(Q.creditLine(q, noneRight)).toBe("Credit: 0 of 1 (0 of the 3 correct choices picked, and 1 wrong one)");
    expect(Q.creditLine(question("single_choice"), twoOfThree)).toBe("Credit: 0.67 of 1");
    expect(Q.partialSummary(question("single_choice"), twoOfThree)).toBeNull();
  });

  it("names the learner's answer and the key in words, never as ids", () => {
    const q = question("multiple_choice");
    const answer = graded({
      response: { choices: ["id-z", "id-x", "gone"] },
      correct_answer: { choices: ["id-x", "id-y"], accepted_answers: [], number: null, tolerance: null },
    });
    expect(Q.responseLines(q, answer)).toEqual([
      "Prefetch",
      "Batch (wrong pick)",
      "(a choice no longer in this question) (wrong pick)",
    ]);
    expect(Q.correctLines(q, answer)).toEqual(["Prefetch", "Cache"]);
  });

  it("shows numbers with their tolerance and text answers as typed", () => {
    const numeric = graded({
      response: { number: 11.75 },
      correct_answer: { choices: [], accepted_answers: [], number: 12, tolerance: 0.5 },
    });
    expect(Q.responseLines(question("numeric"), numeric)).toEqual(["11.75"]);
    expect(Q.correctLines(question("numeric"), numeric)).toEqual(["12 (± 0.5)"]);
    const exact = graded({ correct_answer: { choices: [], accepted_answers: [], number: 3, tolerance: 0 } });
    expect(Q.correctLines(question("numeric"), exact)).toEqual(["3"]);
    const text = graded({
      response: { text: "parquet" },
      correct: true,
      credit: 1,
      correct_answer: { choices: [], accepted_answers: ["TFRecord", "Parquet"], number: null, tolerance: null },
    });
    expect(Q.responseLines(question("short_text"), text)).toEqual(["parquet"]);
    expect(Q.correctLines(question("short_text"), text)).toEqual(["TFRecord", "Parquet"]);
    expect(Q.verdictOf(text)).toBe("correct");
    expect(Q.verdictOf(undefined)).toBe("unanswered");
  });

  it("formats credits and scores", () => {
    expect(Q.formatCredit(2 / 3)).toBe("0.67");
    expect(Q.formatCredit(1)).toBe("1");
    expect(Q.formatCredit(0.5)).toBe("0.5");
    expect(Q.formatPercent(0.7083)).toBe("71%");
    expect(Q.progressLabel(2, 12)).toBe("3 of 12");
  });
});

describe("attempt progress", () => {
  const questions = [question("single_choice", "a"), question("numeric", "b"), question("short_text", "c")];
  const base: Q.Attempt = {
    id: 7,
    quiz: "quiz",
    mode: "all",
    started_at: "2026-01-01T10:00:00Z",
    finished_at: null,
    score: null,
    question_count: 3,
    answered_count: 0,
    quiz_title: "Quiz",
    questions,
    answers: [],
  };

  it("resumes at the first unanswered question, or the last when all are answered", () => {
    expect(Q.resumeIndex(base)).toBe(0);
    expect(Q.resumeIndex({ ...base, answers: [graded({ question: "a" })] })).toBe(1);
    expect(Q.resumeIndex({ ...base, answers: [graded({ question: "a" }), graded({ question: "c" })] })).toBe(1);
    const all = ["a", "b", "c"].map((slug) => graded({ question: slug }));
    expect(Q.resumeIndex({ ...base, answers: all })).toBe(2);
    expect(Q.resumeIndex({ ...base, questions: [], answers: [] })).toBe(0);
  });

  it("adds a graded answer and takes the server's progress", () => {
    const answer = graded({ question: "b", credit: 1, correct: true });
    const next = Q.withAnswer(base, answer, { id: 7, finished: false, score: null, answered_count: 1, question_count: 3 });
    expect(next.answers.map((a) => a.question)).toEqual(["b"]);
    expect(next.answered_count).toBe(1);
    expect(next.finished_at).toBeNull();
    expect(Q.earned(next)).toBe(1);
    const done = Q.withAnswer(next, graded({ question: "b", credit: 0.5 }), {
      id: 7,
      finished: true,
      score: 0.5,
      answered_count: 3,
      question_count: 3,
    });
    expect(done.answers).toHaveLength(1);
    expect(done.finished_at).toBe("2026-01-01T10:00:00Z");
    expect(done.score).toBe(0.5);
  });

  it("finds the unfinished attempt to resume", () => {
    const summary = (id: number, finished: string | null): Q.AttemptSummary => ({
      id,
      quiz: "quiz",
      mode: "all",
      started_at: "2026-01-01T10:00:00Z",
      finished_at: finished,
      score: finished ? 1 : null,
      question_count: 3,
      answered_count: 1,
    });
    expect(Q.openAttempt([summary(3, "2026-01-02T00:00:00Z"), summary(2, null)])?.id).toBe(2);
    expect(Q.openAttempt([summary(3, "2026-01-02T00:00:00Z")])).toBeNull();
  });

  it("makes version 4 UUIDs", () => {
    expect(Q.newUuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

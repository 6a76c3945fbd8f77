/** Answering a lesson's question in place: the request body from what the learner entered, and the grade in words. Pure. */
import type { components } from "../api/schema";
import { describeInterval } from "../format";

type S = components["schemas"];
export type Question = S["PublicQuestionOutput"];
export type Graded = S["LessonAnswerOutput"];
export type LastAnswer = S["LessonLastAnswerOutput"];
export type AnswerBody = S["LessonAnswerInputRequest"];

/** What the learner has entered so far; only the part of the question's kind is read. */
export interface Draft {
  choice: string | null;
  choices: string[];
  text: string;
  number: string;
}

export const emptyDraft: Draft = { choice: null, choices: [], text: "", number: "" };

export type Built = { ok: true; body: AnswerBody } | { ok: false; message: string };

/** Accepts "1,5" for 1.5 and surrounding spaces; anything else that is not a finite number is null. */
export function parseNumber(raw: string): number | null {
  const cleaned = raw.trim().replace(/\s+/g, "").replace(/^(-?\d*),(\d+)$/, "$1.$2");
  if (cleaned === "" || !/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(cleaned)) return null;
  const value = Number(cleaned);
  return Number.isFinite(value) ? value : null;
}

/** The body for POST /questions/{slug}/answers/, or why it cannot be sent yet. */
export function buildAnswer(question: Question, draft: Draft): Built {
  switch (question.kind) {
    case "single_choice":
      return draft.choice === null
        ? { ok: false, message: "Pick an answer first." }
        : { ok: true, body: { board: question.board, choice: draft.choice } };
    case "multiple_choice":
      return draft.choices.length === 0
        ? { ok: false, message: "Pick at least one answer first." }
        : { ok: true, body: { board: question.board, choices: [...draft.choices] } };
    case "short_text":
      return draft.text.trim() === ""
        ? { ok: false, message: "Type an answer first." }
        : { ok: true, body: { text: draft.text } };
    case "numeric": {
      if (draft.number.trim() === "") return { ok: false, message: "Type a number first." };
      const number = parseNumber(draft.number);
      return number === null
        ? { ok: false, message: "That is not a number: use digits, e.g. 12 or 0.5." }
        : { ok: true, body: { number } };
    }
  }
  return { ok: false, message: "This kind of question cannot be answered here yet." };
}

/** Toggles one choice of a multiple-choice draft, keeping the shown order. */
export function toggleChoice(question: Question, picked: string[], key: string): string[] {
  const next = new Set(picked);
  if (next.has(key)) next.delete(key);
  else next.add(key);
  return question.choices.map((choice) => choice.key).filter((choiceKey) => next.has(choiceKey));
}

/** The grade in one short sentence. */
export function gradeHeadline(graded: Pick<Graded, "outcome" | "credit">): string {
  if (graded.outcome === "correct") return "Correct.";
  if (graded.outcome === "partial") return `Partly right: ${Math.round(graded.credit * 100)}% credit.`;
  return "Not quite.";
}

function formatNumber(value: number): string {
  return String(Math.round(value * 1e9) / 1e9);
}

/** The answer key in words, choices by their text as shown. */
export function correctAnswerText(question: Question, graded: Pick<Graded, "correct_answer">): string {
  const key = graded.correct_answer;
  if (question.kind === "single_choice" || question.kind === "multiple_choice") {
    const texts = question.choices.filter((choice) => key.choices.includes(choice.key)).map((choice) => choice.text);
    if (texts.length === 0) return "";
    return texts.length === 1 ? `The answer: ${texts[0]}` : `The answers: ${texts.join("; ")}`;
  }
  if (question.kind === "short_text") {
    if (key.accepted_answers.length === 0) return "";
    return key.accepted_answers.length === 1
      ? `Accepted answer: ${key.accepted_answers[0]}`
      : `Accepted answers: ${key.accepted_answers.join(", ")}`;
  }
  if (question.kind === "numeric" && key.number !== null) {
    const tolerance = key.tolerance ?? 0;
    return tolerance > 0
      ? `The answer: ${formatNumber(key.number)} (± ${formatNumber(tolerance)})`
      : `The answer: ${formatNumber(key.number)}`;
  }
  return "";
}

/** What the answer did to the learner's reviews. */
export function scheduleNote(graded: Pick<Graded, "scheduled" | "due">, now: number = Date.now()): string {
  const due = graded.due === null ? Number.NaN : Date.parse(graded.due);
  const when = Number.isNaN(due) ? "" : due <= now ? "now" : `in ${describeInterval((due - now) / 1000)}`;
  if (graded.scheduled) {
    return when ? `Saved to your reviews: this question comes back ${when}.` : "Saved to your reviews.";
  }
  return when
    ? `Saved as practice: it is already scheduled, and comes back for review ${when}.`
    : "Saved as practice.";
}

/** How a choice is marked once graded: the learner's pick and the key, said in words as well as shown. */
export type ChoiceMark = "correct-picked" | "correct-missed" | "wrong-picked" | "none";

export function choiceMark(key: string, graded: Pick<Graded, "response" | "correct_answer">): ChoiceMark {
  const picked =
    graded.response.choice === key || (graded.response.choices !== undefined && graded.response.choices.includes(key));
  const correct = graded.correct_answer.choices.includes(key);
  if (correct) return picked ? "correct-picked" : "correct-missed";
  return picked ? "wrong-picked" : "none";
}

export const choiceMarkLabel: Record<ChoiceMark, string> = {
  "correct-picked": "your answer, correct",
  "correct-missed": "correct answer",
  "wrong-picked": "your answer, not correct",
  none: "",
};

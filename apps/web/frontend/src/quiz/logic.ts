/** Quiz rules the pages need, pure: answer bodies from form drafts, grading summaries, progress and scores. */
import type { components } from "../api/schema";

type S = components["schemas"];
export type Question = S["QuestionOutput"];
export type Graded = S["GradedAnswerOutput"];
export type Attempt = S["AttemptOutput"];
export type AttemptSummary = S["AttemptSummaryOutput"];
export type AnswerBody = S["AnswerInputRequest"];

/** What the learner has entered for one question and not yet sent. */
export interface Draft {
  choice: string;
  choices: string[];
  text: string;
}

export const EMPTY_DRAFT: Draft = { choice: "", choices: [], text: "" };

export type Built = { ok: true; body: AnswerBody } | { ok: false; message: string };

/**
 * A number as people type it: "12", "-0.5", "1e3", "1 000", and a decimal comma ("12,5").
 * Null when it is not one finite number.
 */
export function parseNumber(input: string): number | null {
  let text = input.trim().replace(/[\s\u00a0\u202f_]/g, "");
  if (text === "") return null;
  // A single comma with no dot is a decimal comma; anything else with commas is ambiguous.
  if (text.includes(",")) {
    if (text.includes(".") || text.split(",").length !== 2) return null;
    text = text.replace(",", ".");
  }
  text = text.replace(/^\u2212/, "-");
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/** The request body for an answer, or what is missing from it, in words. */
export function buildAnswer(question: Question, draft: Draft): Built {
  const shown = new Set(question.choices.map((choice) => choice.key));
  switch (question.kind) {
    case "single_choice":
      if (!shown.has(draft.choice)) return { ok: false, message: "Choose one answer." };
      return { ok: true, body: { question: question.slug, choice: draft.choice } };
    case "multiple_choice": {
      // In the order the attempt shows them, each once.
      const picked = question.choices.map((choice) => choice.key).filter((key) => draft.choices.includes(key));
      if (picked.length === 0) return { ok: false, message: "Choose at least one answer." };
      return { ok: true, body: { question: question.slug, choices: picked } };
    }
    case "short_text": {
      const text = draft.text.trim();
      if (text === "") return { ok: false, message: "Type your answer." };
      if (text.length > 500) return { ok: false, message: "Keep your answer under 500 characters." };
      return { ok: true, body: { question: question.slug, text } };
    }
    case "numeric": {
      if (draft.text.trim() === "") return { ok: false, message: "Type a number." };
      const number = parseNumber(draft.text);
      if (number === null) return { ok: false, message: "That is not a number: type digits, like 12 or 0.5." };
      return { ok: true, body: { question: question.slug, number } };
    }
  }
}

/** The same answer gets the same key, so a retry after a lost response is recorded once. */
export function answerKey(body: AnswerBody): string {
  return JSON.stringify(body);
}

export function newUuid(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function progressLabel(index: number, total: number): string {
  return `${index + 1} of ${total}`;
}

export function answersBySlug(attempt: Pick<Attempt, "answers">): Map<string, Graded> {
  return new Map(attempt.answers.map((answer) => [answer.question, answer]));
}

/** Where a resumed attempt opens: its first unanswered question, else its last. */
export function resumeIndex(attempt: Pick<Attempt, "questions" | "answers">): number {
  const answered = answersBySlug(attempt);
  const index = attempt.questions.findIndex((question) => !answered.has(question.slug));
  return index === -1 ? Math.max(0, attempt.questions.length - 1) : index;
}

/** The attempt with one more graded answer, replacing any earlier one to the same question. */
export function withAnswer(attempt: Attempt, answer: Graded, progress: S["AttemptProgressOutput"]): Attempt {
  const graded: Graded = {
    question: answer.question,
    response: answer.response,
    correct: answer.correct,
    credit: answer.credit,
    explanation: answer.explanation,
    correct_answer: answer.correct_answer,
    answered_at: answer.answered_at,
    client_answer_id: answer.client_answer_id,
  };
  return {
    ...attempt,
    answers: [...attempt.answers.filter((a) => a.question !== answer.question), graded],
    answered_count: progress.answered_count,
    score: progress.score,
    finished_at: progress.finished ? (attempt.finished_at ?? answer.answered_at) : attempt.finished_at,
  };
}

export type Verdict = "correct" | "partial" | "wrong" | "unanswered";

export function verdictOf(answer: Graded | undefined): Verdict {
  if (answer === undefined) return "unanswered";
  if (answer.correct) return "correct";
  return answer.credit > 0 ? "partial" : "wrong";
}

export const VERDICT_LABEL: Record<Verdict, string> = {
  correct: "Correct",
  partial: "Partly right",
  wrong: "Not right",
  unanswered: "Not answered",
};

/** A credit with two decimals, trailing zeros kept off: 1, 0.5, 0.67. */
export function formatCredit(credit: number): string {
  return String(Math.round(credit * 100) / 100);
}

export function formatPercent(score: number): string {
  return `${Math.round(score * 100)}%`;
}

/**
 * What a multiple-choice answer's credit came from, e.g. "2 of the 3 correct choices picked" or
 * "3 of the 3 correct choices picked, and 1 wrong one". Null for other kinds, all or nothing.
 */
export function partialSummary(question: Question, answer: Graded): string | null {
  if (question.kind !== "multiple_choice") return null;
  const correct = new Set(answer.correct_answer.choices);
  const picked = answer.response.choices ?? [];
  const right = picked.filter((key) => correct.has(key)).length;
  const wrong = picked.length - right;
  const summary = `${right} of the ${correct.size} correct choices picked`;
  return wrong === 0 ? summary : `${summary}, and ${wrong} wrong ${wrong === 1 ? "one" : "ones"}`;
}

/** The credit line: "Credit: 0.67 of 1 (2 of the 3 correct choices picked)". */
export function creditLine(question: Question, answer: Graded): string {
  const partial = partialSummary(question, answer);
  const credit = `Credit: ${formatCredit(answer.credit)} of 1`;
  return partial === null ? credit : `${credit} (${partial})`;
}

function choiceTexts(question: Question, keys: string[]): string[] {
  const texts = new Map(question.choices.map((choice) => [choice.key, choice.text]));
  // An id the question no longer shows (a choice removed since) is said as such, never as its raw id.
  return keys.map((key) => texts.get(key) ?? "(a choice no longer in this question)");
}

/** What the learner answered, as text lines (one per picked choice). */
export function responseLines(question: Question, answer: Graded): string[] {
  const response = answer.response;
  if (response.choice !== undefined) return choiceTexts(question, [response.choice]);
  if (response.choices !== undefined) {
    // In the order the attempt shows the choices, not the order they were stored.
    const order = new Map(question.choices.map((choice, index) => [choice.key, index]));
    const place = (key: string) => order.get(key) ?? order.size;
    const sorted = [...response.choices].sort((a, b) => place(a) - place(b));
    // Each pick the key does not hold is said to be wrong, in words (not by colour alone).
    const correct = new Set(answer.correct_answer.choices);
    return sorted.map((key) => {
      const [text] = choiceTexts(question, [key]);
      return correct.has(key) ? `${text}` : `${text} (wrong pick)`;
    });
  }
  if (response.text !== undefined) return [response.text];
  if (response.number !== undefined) return [formatNumber(response.number)];
  return [];
}

/** The answer key, as text lines. */
export function correctLines(question: Question, answer: Graded): string[] {
  const key = answer.correct_answer;
  switch (question.kind) {
    case "single_choice":
    case "multiple_choice":
      return choiceTexts(question, key.choices);
    case "short_text":
      return key.accepted_answers;
    case "numeric":
      if (key.number === null) return [];
      return [
        key.tolerance !== null && key.tolerance > 0
          ? `${formatNumber(key.number)} (± ${formatNumber(key.tolerance)})`
          : formatNumber(key.number),
      ];
  }
}

export function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 1e6) / 1e6);
}

export const KIND_HINT: Record<Question["kind"], string> = {
  single_choice: "Choose one answer.",
  multiple_choice: "Choose every answer that applies.",
  short_text: "Type a short answer.",
  numeric: "Type a number.",
};

/** The score earned so far, as a sum of credits. */
export function earned(attempt: Pick<Attempt, "answers">): number {
  return attempt.answers.reduce((sum, answer) => sum + answer.credit, 0);
}

/** The learner's unfinished attempt to resume, the newest first. */
export function openAttempt(attempts: AttemptSummary[]): AttemptSummary | null {
  return attempts.find((attempt) => attempt.finished_at === null) ?? null;
}


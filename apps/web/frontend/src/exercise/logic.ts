/** The exercise page's rules, kept free of the DOM and of CodeMirror so they can be tested alone. */
import type { components } from "../api/schema";

type S = components["schemas"];
export type Submission = S["SubmissionOutput"];
export type SubmissionStatus = S["SubmissionStatusEnum"];
export type LintFinding = S["LintOutput"];
export type Timing = S["TimingOutput"];
export type Profile = S["ProfileOutput"];
export type PractisedConcept = S["PractisedConceptOutput"];

// ---------------------------------------------------------------- the draft

export interface DraftStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function draftKey(slug: string): string {
  return `quizsite.exercise.${slug}.draft`;
}

/** The learner's unsent code for an exercise, or the starter code when none was kept. */
export function draftRead(storage: DraftStorage | null, slug: string, starter: string): string {
  try {
    return storage?.getItem(draftKey(slug)) ?? starter;
  } catch {
    return starter;
  }
}

/** Keeps the draft; a draft equal to the starter code is not kept, so a changed starter shows through. */
export function draftWrite(storage: DraftStorage | null, slug: string, code: string, starter: string): void {
  try {
    if (code === starter) storage?.removeItem(draftKey(slug));
    else storage?.setItem(draftKey(slug), code);
  } catch {
    // Storage refused (quota, private mode): the draft lasts until the page is left.
  }
}

// ---------------------------------------------------------------- grading progress

export const FINISHED: readonly SubmissionStatus[] = ["done", "failed"];

export function isFinished(status: SubmissionStatus): boolean {
  return FINISHED.includes(status);
}

/** The steps a grading goes through, in order, as the learner sees them. */
export const PHASES: readonly { status: SubmissionStatus; label: string }[] = [
  { status: "queued", label: "Waiting for a grader" },
  { status: "running", label: "Starting the sandbox" },
  { status: "checking", label: "Checking what the pipeline yields" },
  { status: "timing", label: "Timing it against the references" },
  { status: "done", label: "Graded" },
];

export function phaseIndex(status: SubmissionStatus): number {
  if (status === "failed") return PHASES.length - 1;
  return Math.max(0, PHASES.findIndex((phase) => phase.status === status));
}

export function statusLabel(status: SubmissionStatus): string {
  if (status === "failed") return "Could not be graded";
  return PHASES[phaseIndex(status)]?.label ?? status;
}

/** The phase's counts and time left: "step 4 of 9 · about 6 s left"; "" when the grader has told neither. */
export function phaseProgressText(phase: {
  done?: number | null;
  total?: number | null;
  seconds_left?: number | null;
}): string {
  const parts: string[] = [];
  if (phase.done != null && phase.total != null && phase.total > 0) parts.push(`step ${Math.min(phase.done + 1, phase.total)} of ${phase.total}`);
  if (phase.seconds_left != null && Number.isFinite(phase.seconds_left)) {
    const seconds = Math.max(1, Math.round(phase.seconds_left));
    parts.push(seconds >= 90 ? `about ${Math.round(seconds / 60)} min left` : `about ${seconds} s left`);
  }
  return parts.join(" · ");
}

/** Whole percent from the API's 0-1 progress. */
export function percent(progress: number): number {
  if (!Number.isFinite(progress)) return 0;
  return Math.round(Math.min(1, Math.max(0, progress)) * 100);
}

/** Polls often while a grading is young, then less, so a long grading does not flood the server. */
export function pollDelay(polls: number): number {
  return Math.min(3000, 500 + polls * 150);
}

// ---------------------------------------------------------------- the result

const VERDICTS: Record<string, string> = {
  accepted: "Accepted",
  wrong_output: "Wrong output",
  runtime_error: "Runtime error",
  timeout: "Took too long",
  memory_limit: "Used too much memory",
  rejected: "Not run",
};

export function verdictLabel(verdict: string): string {
  return VERDICTS[verdict] ?? (verdict === "" ? "Not graded yet" : verdict.replace(/_/g, " "));
}

export function formatScore(total: number, max: number): string {
  return `${points(total)} / ${points(max)}`;
}

type Check = { passed: boolean; ran?: boolean };

/** A check's outcome as the learner reads it; results graded before `ran` was recorded ran every check. */
export function checkOutcome(check: Check): "passed" | "failed" | "not run" {
  if (check.passed) return "passed";
  return check.ran === false ? "not run" : "failed";
}

/** "3 of 5 passed", with the ones that could not run counted apart: "1 of 5 passed, 2 failed, 2 not run". */
export function checkTally(checks: Check[]): string {
  const counts = { passed: 0, failed: 0, "not run": 0 };
  for (const check of checks) counts[checkOutcome(check)] += 1;
  const parts = [`${counts.passed} of ${checks.length} passed`];
  if (counts["not run"] > 0) parts.push(`${counts.failed} failed`, `${counts["not run"]} not run`);
  return parts.join(", ");
}

/** Points with at most one decimal. */
export function points(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** How the points split: "correctness 60 of 60, speed 40 of 40" (speed "not timed" when it was not). */
export function scoreParts(score: {
  correctness: number;
  correctness_max?: number;
  speed: number;
  speed_max?: number;
  speed_timed: boolean;
}): string {
  // Results graded before the parts' maximums were recorded give the points alone.
  const of = (max: number | undefined) => (max === undefined ? "" : ` of ${points(max)}`);
  const speed = score.speed_timed ? `speed ${points(score.speed)}${of(score.speed_max)}` : "speed not timed";
  return `correctness ${points(score.correctness)}${of(score.correctness_max)}, ${speed}`;
}

/** Seconds with about three significant digits: "0.412 s", "12.3 s", "0.8 ms". */
export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "–";
  if (seconds < 0.01) return `${Number((seconds * 1000).toPrecision(2))} ms`;
  return `${Number(seconds.toPrecision(3))} s`;
}

export interface TimingBar {
  key: "submission" | "naive" | "expert";
  label: string;
  seconds: number;
  /** 0-1 of the longest bar. */
  fraction: number;
}

/** The learner's epoch time beside the naive and expert references', scaled to the slowest. */
export function timingBars(timing: Timing): TimingBar[] {
  const rows: [TimingBar["key"], string, number][] = [
    ["submission", "Your pipeline", timing.submission.epoch_seconds],
    ["naive", "Naive reference", timing.naive.epoch_seconds],
    ["expert", "Expert reference", timing.expert.epoch_seconds],
  ];
  const longest = Math.max(0, ...rows.map(([, , seconds]) => (Number.isFinite(seconds) ? seconds : 0)));
  return rows.map(([key, label, seconds]) => ({
    key,
    label,
    seconds,
    fraction: longest > 0 && Number.isFinite(seconds) ? Math.max(0, seconds) / longest : 0,
  }));
}

/** A speedup as a share of a reference's speed: "2.4× the naive reference's speed", or "0.98×, about as
 * fast as the naive reference" within 5 % of it; "" when there is no ratio. Never "1× slower". */
export function speedupText(ratio: number | undefined, reference: string): string {
  if (ratio === undefined || !Number.isFinite(ratio) || ratio <= 0) return "";
  if (Math.abs(ratio - 1) < 0.05) return `${ratio.toFixed(2)}×, about as fast as the ${reference}`;
  const shown = ratio >= 10 ? ratio.toFixed(0) : ratio < 1 ? ratio.toFixed(2) : ratio.toFixed(1);
  return `${shown}× the ${reference}’s speed`;
}

export interface StageBar {
  key: string;
  /** What the learner wrote: "map", "batch", "read"… */
  kind: string;
  /** tf.data's name of the stage: "ParallelMapV2". */
  operation: string;
  share: number;
  seconds: number;
  parallel: boolean;
  slowest: boolean;
}

/** The pipeline's stages from the source to the last, each with its share of the pipeline's own time. */
export function stageBars(profile: Profile): StageBar[] {
  return profile.stages.map((stage) => ({
    key: stage.path,
    kind: stage.kind,
    operation: stage.operation,
    share: Number.isFinite(stage.share) ? Math.min(Math.max(stage.share, 0), 1) : 0,
    seconds: stage.seconds_per_batch,
    parallel: stage.parallel,
    slowest: stage.path === profile.slowest,
  }));
}

/** A share as a whole percent, with "<1 %" for a stage that took a little time and "0 %" for none. */
export function sharePercent(share: number): string {
  if (!Number.isFinite(share) || share <= 0) return "0 %";
  if (share < 0.01) return "<1 %";
  return `${Math.round(share * 100)} %`;
}

/** The TensorFlow Profiler's verdict in words: "Highly input-bound: the step waited for input 42 % of the time". */
export function inputBoundText(bound: Profile["input_bound"]): string {
  if (!bound) return "";
  const waited = `${Math.round(bound.input_wait_fraction * 100)} %`;
  const verdict = { not: "Not input-bound", moderately: "Moderately input-bound", highly: "Highly input-bound" }[
    bound.verdict
  ];
  return `${verdict}: the training step waited for input ${waited} of the time`;
}

// ---------------------------------------------------------------- lint findings in the editor

/** Just what lint placement needs of a document: CodeMirror's `Text` has this shape. */
export interface LineDoc {
  lines: number;
  line(n: number): { from: number; to: number; text: string };
}

export interface LineDiagnostic {
  from: number;
  to: number;
  severity: "warning";
  source: string;
  message: string;
}

/** Each finding on its line (clamped into the document), marked from its first non-blank character to its end. */
export function findingsToDiagnostics(doc: LineDoc, findings: readonly LintFinding[]): LineDiagnostic[] {
  return findings.map((finding) => {
    const number = Math.min(Math.max(1, Math.trunc(finding.line) || 1), doc.lines);
    const { from, to, text } = doc.line(number);
    const indent = text.length - text.trimStart().length;
    return { from: Math.min(from + indent, to), to, severity: "warning", source: finding.rule, message: finding.message };
  });
}

// ---------------------------------------------------------------- the prompt

export type PromptBlock =
  | { kind: "paragraph"; text: string }
  | { kind: "list"; items: string[] }
  | { kind: "code"; code: string };

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+/;

/**
 * Paragraphs, bullet lists and indented code, as plain data: blank lines separate blocks, a block
 * indented four spaces deeper than the prompt's text is code and keeps its lines and indentation.
 */
export function parsePrompt(source: string): PromptBlock[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const textLines = lines.filter((line) => line.trim() !== "" && !BULLET.test(line));
  const base = textLines.length ? Math.min(...textLines.map(indentOf)) : 0;
  const chunks: string[][] = [];
  let current: string[] = [];
  for (const line of lines) {
    if (line.trim() === "") {
      if (current.length) chunks.push(current);
      current = [];
    } else current.push(line);
  }
  if (current.length) chunks.push(current);

  const blocks: PromptBlock[] = [];
  for (const chunk of chunks) {
    if (chunk.every((line) => indentOf(line) >= base + 4)) {
      const strip = Math.min(...chunk.map(indentOf));
      const code = chunk.map((line) => line.slice(strip)).join("\n");
      const last = blocks[blocks.length - 1];
      // Code with blank lines inside arrives in several chunks: they are one block.
      if (last?.kind === "code") last.code += `\n\n${code}`;
      else blocks.push({ kind: "code", code });
    } else if (chunk.every((line, index) => BULLET.test(line) || (index > 0 && indentOf(line) > indentOf(chunk[0] ?? "")))) {
      const items: string[] = [];
      for (const line of chunk) {
        if (BULLET.test(line)) items.push(line.replace(BULLET, "").trim());
        else items[items.length - 1] += ` ${line.trim()}`;
      }
      blocks.push({ kind: "list", items });
    } else {
      blocks.push({ kind: "paragraph", text: chunk.map((line) => line.trim()).join(" ") });
    }
  }
  return blocks;
}

// ---------------------------------------------------------------- submissions

export function newClientId(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  // Not secret, only unique enough to make a retry safe.
  const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/** Replaces a submission in a newest-first list, or puts it first when new. */
export function upsertSubmission(list: readonly Submission[], submission: Submission): Submission[] {
  const index = list.findIndex((item) => item.id === submission.id);
  if (index < 0) return [submission, ...list];
  return list.map((item) => (item.id === submission.id ? submission : item));
}

/** The decks that hold the cards an exercise practises, each once, in the order the cards first name them. */
export function practisedDecks(concepts: PractisedConcept[]): string[] {
  const decks: string[] = [];
  for (const concept of concepts) {
    for (const card of concept.cards) if (!decks.includes(card.deck)) decks.push(card.deck);
  }
  return decks;
}

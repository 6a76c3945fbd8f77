/** The parts of a quiz attempt's screen: the question navigation, the answer control for each kind, the results. */
import { useState } from "preact/hooks";
import { call, client } from "../api/client";
import { describeError } from "../api/errors";
import { ErrorMessage, PageTitle } from "../components/common";
import { RichText } from "../components/RichText";
import { formatMoment, plural } from "../format";
import { navigate } from "../router";
import { AnswerReview, VerdictBadge } from "./AnswerReview";
import {
  answersBySlug,
  earned,
  formatCredit,
  formatPercent,
  verdictOf,
  VERDICT_LABEL,
  type Attempt,
  type Draft,
  type Graded,
  type Question,
} from "./logic";

export function QuestionNav({
  attempt,
  index,
  answers,
  go,
}: {
  attempt: Attempt;
  index: number;
  answers: Map<string, Graded>;
  go: (index: number) => void;
}) {
  return (
    <nav class="quiz-steps" aria-label="Questions">
      <ol>
        {attempt.questions.map((question, position) => {
          const verdict = verdictOf(answers.get(question.slug));
          return (
            <li key={question.slug}>
              <button
                type="button"
                class={`quiz-step quiz-step-${verdict}`}
                aria-current={position === index ? "step" : undefined}
                aria-label={`Question ${position + 1}: ${verdict === "unanswered" ? "not answered yet" : VERDICT_LABEL[verdict].toLowerCase()}`}
                onClick={() => go(position)}
              >
                {position + 1}
              </button>
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

export function AnswerControl({
  question,
  draft,
  onDraft,
  promptId,
  hintId,
  errorId,
  disabled,
}: {
  question: Question;
  draft: Draft;
  onDraft: (draft: Draft) => void;
  promptId: string;
  hintId: string;
  errorId: string | undefined;
  disabled: boolean;
}) {
  const describedBy = [hintId, errorId].filter(Boolean).join(" ");
  const name = `quiz-answer-${question.id}`;
  if (question.kind === "single_choice" || question.kind === "multiple_choice") {
    const multiple = question.kind === "multiple_choice";
    return (
      <fieldset
        class="quiz-choices"
        aria-labelledby={promptId}
        aria-describedby={describedBy}
        aria-invalid={errorId ? "true" : undefined}
        disabled={disabled}
      >
        <ul>
          {question.choices.map((choice) => {
            const checked = multiple ? draft.choices.includes(choice.key) : draft.choice === choice.key;
            return (
              <li key={choice.key}>
                <label class="quiz-choice">
                  <input
                    type={multiple ? "checkbox" : "radio"}
                    name={name}
                    value={choice.key}
                    checked={checked}
                    onChange={(event) => {
                      const on = (event.currentTarget as HTMLInputElement).checked;
                      if (!multiple) onDraft({ ...draft, choice: choice.key });
                      else
                        onDraft({
                          ...draft,
                          choices: on
                            ? [...draft.choices.filter((key) => key !== choice.key), choice.key]
                            : draft.choices.filter((key) => key !== choice.key),
                        });
                    }}
                  />
                  <span>{choice.text}</span>
                </label>
              </li>
            );
          })}
        </ul>
      </fieldset>
    );
  }
  const numeric = question.kind === "numeric";
  return (
    <div class="field quiz-text">
      <label for={name}>Your answer</label>
      <input
        id={name}
        name={name}
        type="text"
        inputMode={numeric ? "decimal" : "text"}
        autoComplete="off"
        spellcheck={!numeric}
        maxLength={numeric ? 40 : 500}
        value={draft.text}
        disabled={disabled}
        aria-describedby={`${promptId} ${describedBy}`}
        aria-invalid={errorId ? "true" : undefined}
        onInput={(event) => onDraft({ ...draft, text: (event.currentTarget as HTMLInputElement).value })}
      />
    </div>
  );
}

export function Results({ attempt }: { attempt: Attempt }) {
  const answers = answersBySlug(attempt);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const score = attempt.score ?? 0;
  const points = earned(attempt);
  const counts = { correct: 0, partial: 0, wrong: 0, unanswered: 0 };
  for (const question of attempt.questions) counts[verdictOf(answers.get(question.slug))] += 1;

  async function again() {
    setBusy(true);
    setProblem(null);
    try {
      const fresh = await call(
        client.POST("/api/v1/quizzes/{slug}/attempts/", {
          params: { path: { slug: attempt.quiz } },
          body: { mode: "all" },
        }),
      );
      navigate(`/quiz-attempts/${fresh.id}`);
    } catch (error) {
      setProblem(describeError(error));
      setBusy(false);
    }
  }

  return (
    <div class="quiz-page quiz-results">
      <p class="eyebrow">
        <a href={`/quizzes/${encodeURIComponent(attempt.quiz)}`}>{attempt.quiz_title}</a>
      </p>
      <PageTitle>Your results</PageTitle>
      <section class="card quiz-score" aria-labelledby="quiz-score-title">
        <h2 id="quiz-score-title">Score</h2>
        <p class="quiz-score-value">
          <strong>{formatPercent(score)}</strong>
          <span class="meta">
            {" "}
            {formatCredit(points)} of {attempt.question_count} points
          </span>
        </p>
        <p>
          {[
            plural(counts.correct, "correct", "correct"),
            counts.partial > 0 ? plural(counts.partial, "partly right", "partly right") : "",
            plural(counts.wrong, "not right", "not right"),
            counts.unanswered > 0 ? plural(counts.unanswered, "not answered", "not answered") : "",
          ]
            .filter(Boolean)
            .join(" · ")}
        </p>
        {attempt.finished_at !== null && (
          <p class="meta">Finished {formatMoment(attempt.finished_at)}</p>
        )}
        {problem !== null && <ErrorMessage message={problem} />}
        <p class="quiz-actions">
          <button type="button" class="button primary" disabled={busy} onClick={() => void again()}>
            {busy ? "Starting…" : "Take the quiz again"}
          </button>
          <a class="button secondary" href={`/quizzes/${encodeURIComponent(attempt.quiz)}`}>
            Back to the quiz
          </a>
        </p>
      </section>
      <h2>Question by question</h2>
      <ol class="quiz-result-list">
        {attempt.questions.map((question, position) => {
          const answer = answers.get(question.slug);
          return (
            <li key={question.slug}>
              <article class="card quiz-result" aria-labelledby={`quiz-r-${question.id}`}>
                <h3 id={`quiz-r-${question.id}`}>
                  Question {position + 1} <VerdictBadge answer={answer} />
                </h3>
                <div class="quiz-prompt">
                  <RichText text={question.prompt} />
                </div>
                <AnswerReview question={question} answer={answer} badge={false} />
              </article>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

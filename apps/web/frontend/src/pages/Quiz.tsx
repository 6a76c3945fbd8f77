/** A quiz: what it covers, what is due, the learner's past attempts, and starting or resuming one. */
import { useState } from "preact/hooks";
import { call, client } from "../api/client";
import type { components } from "../api/schema";
import { describeError } from "../api/errors";
import { Await, ErrorMessage, PageTitle } from "../components/common";
import { RichText } from "../components/RichText";
import { plural } from "../format";
import { useLoad, useTitle } from "../hooks";
import { formatMoment } from "../format";
import { formatPercent, openAttempt, type AttemptSummary } from "../quiz/logic";
import { navigate } from "../router";

type QuizData = components["schemas"]["QuizOutput"];
type Mode = components["schemas"]["QuizAttemptModeEnum"];

const HISTORY_SIZE = 50;

async function loadQuiz(slug: string): Promise<{ quiz: QuizData; attempts: AttemptSummary[]; more: boolean }> {
  const [quiz, attempts] = await Promise.all([
    call(client.GET("/api/v1/quizzes/{slug}/", { params: { path: { slug } } })),
    call(client.GET("/api/v1/quiz-attempts/", { params: { query: { quiz: slug, page_size: HISTORY_SIZE } } })),
  ]);
  return { quiz, attempts: attempts.results, more: attempts.next !== null && attempts.next !== undefined };
}

export default function Quiz({ slug }: { slug: string }) {
  const [value, retry] = useLoad(() => loadQuiz(slug), [slug]);
  useTitle(value.state === "ready" ? value.data.quiz.title : "Quiz");
  return (
    <div class="quiz-page">
      <Await value={value} retry={retry}>
        {({ quiz, attempts, more }) => <QuizView quiz={quiz} attempts={attempts} more={more} />}
      </Await>
    </div>
  );
}

function QuizView({ quiz, attempts, more }: { quiz: QuizData; attempts: AttemptSummary[]; more: boolean }) {
  const [busy, setBusy] = useState<Mode | null>(null);
  const [error, setError] = useState<string | null>(null);
  const open = openAttempt(attempts);

  async function start(mode: Mode) {
    if (busy !== null) return;
    setBusy(mode);
    setError(null);
    try {
      const attempt = await call(
        client.POST("/api/v1/quizzes/{slug}/attempts/", { params: { path: { slug: quiz.slug } }, body: { mode } }),
      );
      navigate(`/quiz-attempts/${attempt.id}`);
    } catch (problem) {
      setError(describeError(problem));
      setBusy(null);
    }
  }

  const empty = quiz.question_count === 0;
  return (
    <>
      <p class="eyebrow">
        Quiz · <a href={`/lessons/${encodeURIComponent(quiz.lesson)}`}>{quiz.lesson_title}</a>
      </p>
      <PageTitle>{quiz.title}</PageTitle>
      {quiz.description && (
        <div class="quiz-description">
          <RichText text={quiz.description} />
        </div>
      )}
      <dl class="quiz-facts">
        <div>
          <dt>Questions</dt>
          <dd>{quiz.question_count}</dd>
        </div>
        <div>
          <dt>Due for you</dt>
          <dd>{quiz.due_count}</dd>
        </div>
        <div>
          <dt>Best score</dt>
          <dd>{quiz.best_score === null ? "None yet" : formatPercent(quiz.best_score)}</dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>{quiz.attempt_count}</dd>
        </div>
      </dl>
      {error !== null && <ErrorMessage message={error} />}
      <section class="card quiz-start" aria-labelledby="quiz-start-title">
        <h2 id="quiz-start-title">{open ? "Carry on" : "Take the quiz"}</h2>
        {empty ? (
          <p>This quiz has no questions yet.</p>
        ) : (
          <>
            {open && (
              <p>
                You have an unfinished attempt: {open.answered_count} of {open.question_count} answered.
              </p>
            )}
            <p class="quiz-actions">
              {open && (
                <a class="button primary" href={`/quiz-attempts/${open.id}`}>
                  Resume attempt
                </a>
              )}
              <button
                type="button"
                class={open ? "button secondary" : "button primary"}
                disabled={busy !== null}
                onClick={() => void start("all")}
              >
                {busy === "all" ? "Starting…" : open ? "Start a new attempt" : "Start"}
              </button>
              {quiz.due_count > 0 && quiz.due_count < quiz.question_count && (
                <button type="button" class="button secondary" disabled={busy !== null} onClick={() => void start("due")}>
                  {busy === "due" ? "Starting…" : `Only the ${plural(quiz.due_count, "due question", "due questions")}`}
                </button>
              )}
            </p>
            <p class="meta">
              {`${plural(quiz.question_count, "question", "questions")}, one at a time, in a new order each attempt. `}
              Each answer is saved as you give it, so you can leave and come back.
            </p>
          </>
        )}
      </section>
      <section aria-labelledby="quiz-history-title">
        <h2 id="quiz-history-title">Your attempts</h2>
        {attempts.length === 0 ? (
          <p>You have not taken this quiz yet.</p>
        ) : (
          <ol class="quiz-history" reversed>
            {attempts.map((attempt) => (
              <HistoryRow key={attempt.id} attempt={attempt} />
            ))}
          </ol>
        )}
        {more && <p class="meta">Only your {HISTORY_SIZE} most recent attempts are listed.</p>}
      </section>
    </>
  );
}

function HistoryRow({ attempt }: { attempt: AttemptSummary }) {
  const finished = attempt.finished_at !== null;
  return (
    <li class="quiz-history-row">
      <span class="quiz-history-when">
        <time dateTime={attempt.started_at}>{formatMoment(attempt.started_at)}</time>
        {attempt.mode === "due" && <span class="meta"> · due questions</span>}
      </span>
      <span class="quiz-history-score">
        {finished && attempt.score !== null ? (
          <strong>{formatPercent(attempt.score)}</strong>
        ) : (
          <span class="quiz-badge">Unfinished</span>
        )}
        <span class="meta">
          {" "}
          {attempt.answered_count} of {attempt.question_count} answered
        </span>
      </span>
      <a href={`/quiz-attempts/${attempt.id}`} class="quiz-history-link">
        {finished ? "See results" : "Resume"}
        <span class="visually-hidden"> of the attempt started {formatMoment(attempt.started_at)}</span>
      </a>
    </li>
  );
}

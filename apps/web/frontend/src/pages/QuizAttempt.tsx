/** A quiz attempt: one question at a time, each answer saved and graded as it is given, then the results. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { ApiProblem, describeError } from "../api/errors";
import { ErrorMessage, Loading, PageTitle } from "../components/common";
import { RichText } from "../components/RichText";
import { plural } from "../format";
import { useTitle } from "../hooks";
import { AnswerReview } from "../quiz/AnswerReview";
import {
  EMPTY_DRAFT,
  KIND_HINT,
  answerKey,
  answersBySlug,
  buildAnswer,
  newUuid,
  progressLabel,
  resumeIndex,
  verdictOf,
  VERDICT_LABEL,
  withAnswer,
  type Attempt,
  type Draft,
  type Question,
} from "../quiz/logic";
import { AnswerControl, QuestionNav, Results } from "../quiz/parts";

function attemptId(id: string): number | null {
  return /^\d{1,18}$/.test(id) ? Number(id) : null;
}

async function fetchAttempt(id: number): Promise<Attempt> {
  return call(client.GET("/api/v1/quiz-attempts/{attempt_id}/", { params: { path: { attempt_id: id } } }));
}

export default function QuizAttempt({ id }: { id: string }) {
  const numericId = attemptId(id);
  const [attempt, setAttempt] = useState<Attempt | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [showResults, setShowResults] = useState(false);
  const [index, setIndex] = useState(0);

  const load = useCallback(
    async (resume: boolean) => {
      if (numericId === null) {
        setLoadError("There is no quiz attempt at this address.");
        return;
      }
      setLoadError(null);
      try {
        const fresh = await fetchAttempt(numericId);
        setAttempt(fresh);
        if (fresh.finished_at !== null) setShowResults(true);
        if (resume) setIndex(resumeIndex(fresh));
      } catch (error) {
        setLoadError(describeError(error));
      }
    },
    [numericId],
  );

  useEffect(() => {
    void load(true);
  }, [load]);

  useTitle(attempt ? (showResults ? `Results: ${attempt.quiz_title}` : attempt.quiz_title) : "Quiz");

  if (attempt === null) {
    return (
      <div class="quiz-page">
        <PageTitle>Quiz</PageTitle>
        {loadError !== null ? <ErrorMessage message={loadError} onRetry={() => void load(true)} /> : <Loading label="Loading your quiz…" />}
      </div>
    );
  }
  if (showResults) return <Results attempt={attempt} />;
  return (
    <Taking
      attempt={attempt}
      index={index}
      setIndex={setIndex}
      onAttempt={setAttempt}
      onResults={() => setShowResults(true)}
      reload={() => load(false)}
    />
  );
}

function Taking({
  attempt,
  index,
  setIndex,
  onAttempt,
  onResults,
  reload,
}: {
  attempt: Attempt;
  index: number;
  setIndex: (index: number) => void;
  onAttempt: (attempt: Attempt) => void;
  onResults: () => void;
  reload: () => Promise<void>;
}) {
  const [drafts, setDrafts] = useState<Record<string, Draft>>({});
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [invalid, setInvalid] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const answerIds = useRef(new Map<string, string>());
  const heading = useRef<HTMLHeadingElement>(null);
  const review = useRef<HTMLDivElement>(null);
  const moved = useRef(false);

  const total = attempt.questions.length;
  const question = attempt.questions[Math.min(index, total - 1)];
  const answers = answersBySlug(attempt);
  const answer = question ? answers.get(question.slug) : undefined;
  const finished = attempt.finished_at !== null;
  const unanswered = total - answers.size;

  useEffect(() => {
    if (!moved.current) return;
    moved.current = false;
    heading.current?.focus();
  }, [index]);

  function go(to: number) {
    if (to < 0 || to >= total) return;
    setProblem(null);
    setInvalid(null);
    setConfirming(false);
    moved.current = true;
    setIndex(to);
  }

  function setDraft(slug: string, draft: Draft) {
    setDrafts((all) => ({ ...all, [slug]: draft }));
    setInvalid(null);
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (!question || busy || answer !== undefined) return;
    const built = buildAnswer(question, drafts[question.slug] ?? EMPTY_DRAFT);
    if (!built.ok) {
      setInvalid(built.message);
      return;
    }
    const key = answerKey(built.body);
    let clientId = answerIds.current.get(key);
    if (clientId === undefined) {
      clientId = newUuid();
      answerIds.current.set(key, clientId);
    }
    setBusy(true);
    setProblem(null);
    try {
      const result = await call(
        client.POST("/api/v1/quiz-attempts/{attempt_id}/answers/", {
          params: { path: { attempt_id: attempt.id } },
          body: { ...built.body, client_answer_id: clientId },
        }),
      );
      onAttempt(withAnswer(attempt, result, result.attempt));
      requestAnimationFrame(() => review.current?.focus());
    } catch (error) {
      if (error instanceof ApiProblem && (error.code === "already_answered" || error.code === "attempt_finished")) {
        // Answered or finished elsewhere (another tab): show what the server holds.
        await reload();
      }
      setProblem(describeError(error));
    } finally {
      setBusy(false);
    }
  }

  async function finish() {
    if (busy) return;
    setBusy(true);
    setProblem(null);
    try {
      const done = await call(
        client.POST("/api/v1/quiz-attempts/{attempt_id}/finish/", { params: { path: { attempt_id: attempt.id } } }),
      );
      onAttempt(done);
      onResults();
    } catch (error) {
      if (error instanceof ApiProblem && error.code === "attempt_finished") {
        await reload();
        onResults();
        return;
      }
      setProblem(describeError(error));
    } finally {
      setBusy(false);
    }
  }

  if (!question) {
    return (
      <div class="quiz-page">
        <PageTitle>{attempt.quiz_title}</PageTitle>
        <p>This attempt has no questions left to show: they were removed from the quiz.</p>
        <p>
          <a href={`/quizzes/${encodeURIComponent(attempt.quiz)}`}>Back to the quiz</a>
        </p>
      </div>
    );
  }

  const hintId = `quiz-hint-${question.id}`;
  const promptId = `quiz-prompt-${question.id}`;
  const errorId = `quiz-error-${question.id}`;
  const last = index >= total - 1;
  return (
    <div class="quiz-page quiz-taking">
      <p class="eyebrow">
        <a href={`/quizzes/${encodeURIComponent(attempt.quiz)}`}>Quiz</a>
        {attempt.mode === "due" && " · due questions"}
      </p>
      <PageTitle>{attempt.quiz_title}</PageTitle>
      <div class="quiz-progress">
        <p>
          <span class="quiz-progress-count">Question {progressLabel(index, total)}</span>
          <span class="meta"> · {plural(answers.size, "answer", "answers")} saved</span>
        </p>
        <progress max={total} value={answers.size} aria-label="Questions answered">
          {answers.size} of {total}
        </progress>
      </div>
      <QuestionNav attempt={attempt} index={index} answers={answers} go={go} />
      {problem !== null && <ErrorMessage message={problem} />}
      <section class="quiz-question card" aria-labelledby={`quiz-q-${question.id}`}>
        <h2 id={`quiz-q-${question.id}`} tabIndex={-1} ref={heading}>
          Question {index + 1}
        </h2>
        <div class="quiz-prompt" id={promptId}>
          <RichText text={question.prompt} />
        </div>
        {answer === undefined ? (
          <form onSubmit={(event) => void submit(event)} noValidate>
            <p class="meta quiz-kind-hint" id={hintId}>
              {KIND_HINT[question.kind]}
            </p>
            <AnswerControl
              question={question}
              draft={drafts[question.slug] ?? EMPTY_DRAFT}
              onDraft={(draft) => setDraft(question.slug, draft)}
              promptId={promptId}
              hintId={hintId}
              errorId={invalid !== null ? errorId : undefined}
              disabled={busy || finished}
            />
            {invalid !== null && (
              <p class="quiz-invalid" id={errorId} role="alert">
                {invalid}
              </p>
            )}
            <p class="quiz-actions">
              <button type="submit" class="button primary" disabled={busy || finished}>
                {busy ? "Saving…" : "Check answer"}
              </button>
            </p>
          </form>
        ) : (
          <div class="quiz-feedback" tabIndex={-1} ref={review} aria-label="Your answer, graded">
            <AnswerReview question={question} answer={answer} />
          </div>
        )}
      </section>
      <div class="quiz-nav-buttons">
        <button type="button" class="button secondary" disabled={index === 0} onClick={() => go(index - 1)}>
          Previous
        </button>
        {finished ? (
          <button type="button" class="button primary" onClick={onResults}>
            See your results
          </button>
        ) : (
          <button
            type="button"
            class={answer !== undefined ? "button primary" : "button secondary"}
            disabled={last}
            onClick={() => go(index + 1)}
          >
            {answer !== undefined ? "Next question" : "Skip for now"}
          </button>
        )}
      </div>
      {!finished && (
        <section class="quiz-finish" aria-labelledby="quiz-finish-title">
          <h2 id="quiz-finish-title" class="visually-hidden">
            Finish
          </h2>
          {confirming ? (
            <div class="alert alert-info" role="alert">
              <p>
                {plural(unanswered, "question is", "questions are")} not answered yet and will count 0. Finish
                anyway?
              </p>
              <p class="quiz-actions">
                <button type="button" class="button primary" disabled={busy} onClick={() => void finish()}>
                  Finish now
                </button>
                <button type="button" class="button secondary" onClick={() => setConfirming(false)}>
                  Keep going
                </button>
              </p>
            </div>
          ) : (
            <button
              type="button"
              class="button secondary"
              disabled={busy}
              onClick={() => (unanswered > 0 ? setConfirming(true) : void finish())}
            >
              Finish the quiz
            </button>
          )}
        </section>
      )}
      <p class="visually-hidden" aria-live="polite">
        {answer !== undefined ? `${VERDICT_LABEL[verdictOf(answer)]}.` : ""}
        {finished ? " The quiz is finished; your results are ready." : ""}
      </p>
    </div>
  );
}

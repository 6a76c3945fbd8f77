/** A lesson's question answered where it stands: graded by the server, the key and explanation shown in place. */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { describeError } from "../api/errors";
import { ErrorMessage } from "../components/common";
import { RichText } from "../components/RichText";
import { formatMoment } from "../format";
import {
  buildAnswer,
  choiceMark,
  choiceMarkLabel,
  correctAnswerText,
  emptyDraft,
  gradeHeadline,
  scheduleNote,
  toggleChoice,
  type AnswerBody,
  type Draft,
  type Graded,
  type LastAnswer,
  type Question,
} from "./answer";

type Status =
  | { state: "editing"; hint: string }
  | { state: "sending" }
  | { state: "graded"; graded: Graded }
  | { state: "failed"; message: string };

function newAnswerId(): string | undefined {
  try {
    return crypto.randomUUID();
  } catch {
    return undefined;
  }
}

/** The draft a stored answer was: what the learner sent, in the ids of the board it was given on. */
function draftOf(last: LastAnswer): Draft {
  const response = last.response;
  return {
    choice: response.choice ?? null,
    choices: response.choices ?? [],
    text: response.text ?? "",
    number: response.number === undefined ? "" : String(response.number),
  };
}

export function InlineQuestion({
  heading,
  question: fresh,
  last = null,
}: {
  heading: string;
  question: Question;
  /** The learner's latest answer, from an earlier visit: shown answered, on the board it was given on. */
  last?: LastAnswer | null;
}) {
  const id = `q-${fresh.slug}`;
  const [question, setQuestion] = useState<Question>(() => (last ? { ...fresh, choices: last.choices } : fresh));
  const [earlier, setEarlier] = useState(last !== null);
  const [draft, setDraft] = useState<Draft>(() => (last ? draftOf(last) : emptyDraft));
  const [status, setStatus] = useState<Status>(() =>
    last ? { state: "graded", graded: last } : { state: "editing", hint: "" },
  );
  // A resend of the very same answer (after a network failure) keeps its id, so it is recorded once.
  const pending = useRef<{ body: string; id: string | undefined } | null>(null);
  const firstInput = useRef<HTMLInputElement>(null);
  const afterGrade = useRef<HTMLButtonElement>(null);
  const feedback = useRef<HTMLDivElement>(null);
  const [focusAfter, setFocusAfter] = useState<"grade" | "retry" | null>(null);

  // Before paint, so nothing typed in between lands on the element losing focus.
  useLayoutEffect(() => {
    if (focusAfter === "grade") (afterGrade.current ?? feedback.current)?.focus();
    if (focusAfter === "retry") firstInput.current?.focus();
    setFocusAfter(null);
  }, [focusAfter]);

  const graded = status.state === "graded" ? status.graded : null;
  const locked = status.state === "sending" || graded !== null;

  async function submit(event: Event) {
    event.preventDefault();
    if (locked) return;
    const built = buildAnswer(question, draft);
    if (!built.ok) {
      setStatus({ state: "editing", hint: built.message });
      firstInput.current?.focus();
      return;
    }
    const bodyKey = JSON.stringify(built.body);
    if (pending.current?.body !== bodyKey) pending.current = { body: bodyKey, id: newAnswerId() };
    const answerId = pending.current.id;
    const body: AnswerBody = answerId ? { ...built.body, client_answer_id: answerId } : built.body;
    setStatus({ state: "sending" });
    try {
      const result = await call(
        client.POST("/api/v1/questions/{slug}/answers/", { params: { path: { slug: question.slug } }, body }),
      );
      pending.current = null;
      setEarlier(false);
      setStatus({ state: "graded", graded: result });
      setFocusAfter("grade");
    } catch (error) {
      setStatus({ state: "failed", message: describeError(error) });
    }
  }

  function tryAgain() {
    // A new try is on the lesson's own board, whatever board the earlier answer was shown on.
    setQuestion(fresh);
    setEarlier(false);
    setDraft(emptyDraft);
    setStatus({ state: "editing", hint: "" });
    pending.current = null;
    setFocusAfter("retry");
  }

  const hintId = `${id}-hint`;
  const hint = status.state === "editing" ? status.hint : "";
  const choiceKind = question.kind === "single_choice" || question.kind === "multiple_choice";
  const multiple = question.kind === "multiple_choice";
  return (
    <section class="block question inline-question" aria-labelledby={id}>
      <p class="eyebrow">{heading || "Check yourself"}</p>
      <form class="inline-question-form" onSubmit={submit} noValidate>
        <fieldset aria-describedby={hint ? hintId : undefined}>
          <legend id={id}>{question.prompt}</legend>
          {multiple && <p class="question-hint">Pick every answer that applies.</p>}
          {choiceKind ? (
            <ul class="choices">
              {question.choices.map((choice, index) => {
                const mark = graded ? choiceMark(choice.key, graded) : "none";
                const checked = multiple ? draft.choices.includes(choice.key) : draft.choice === choice.key;
                return (
                  <li key={choice.key} class={`choice choice-${mark}`}>
                    <label>
                      <input
                        ref={index === 0 ? firstInput : undefined}
                        type={multiple ? "checkbox" : "radio"}
                        name={id}
                        value={choice.key}
                        checked={checked}
                        disabled={locked}
                        onChange={() =>
                          setDraft((current) =>
                            multiple
                              ? { ...current, choices: toggleChoice(question, current.choices, choice.key) }
                              : { ...current, choice: choice.key },
                          )
                        }
                      />{" "}
                      <span class="choice-text">{choice.text}</span>
                      {mark !== "none" && <span class={`choice-mark mark-${mark}`}>{choiceMarkLabel[mark]}</span>}
                    </label>
                  </li>
                );
              })}
            </ul>
          ) : (
            <div class="field">
              <label for={`${id}-input`}>{question.kind === "numeric" ? "Your answer (a number)" : "Your answer"}</label>
              <input
                ref={firstInput}
                id={`${id}-input`}
                type="text"
                inputMode={question.kind === "numeric" ? "decimal" : undefined}
                autoComplete="off"
                spellcheck={false}
                maxLength={500}
                disabled={locked}
                value={question.kind === "numeric" ? draft.number : draft.text}
                onInput={(event) => {
                  const value = (event.currentTarget as HTMLInputElement).value;
                  setDraft((current) =>
                    question.kind === "numeric" ? { ...current, number: value } : { ...current, text: value },
                  );
                }}
              />
            </div>
          )}
          {hint && (
            <p class="question-hint question-problem" id={hintId}>
              {hint}
            </p>
          )}
        </fieldset>
        {graded === null && (
          <div class="question-actions">
            <button type="submit" class="button primary" disabled={status.state === "sending"}>
              {status.state === "sending" ? "Checking…" : "Check answer"}
            </button>
          </div>
        )}
      </form>
      {status.state === "failed" && <ErrorMessage message={status.message} />}
      <div class="question-feedback-region" role="status" aria-live="polite">
        {graded && (
          <div
            ref={feedback}
            tabIndex={-1}
            class={`question-feedback feedback-${graded.outcome}`}
          >
            {earlier && <p class="feedback-earlier">Your answer of {formatMoment(graded.answered_at)}:</p>}
            <p class="feedback-headline">
              <strong>{gradeHeadline(graded)}</strong>
            </p>
            {graded.outcome !== "correct" && correctAnswerText(question, graded) && (
              <p class="feedback-key">{correctAnswerText(question, graded)}</p>
            )}
            {graded.explanation && (
              <div class="feedback-explanation">
                <RichText text={graded.explanation} />
              </div>
            )}
            <p class="feedback-schedule">{scheduleNote(graded)}</p>
          </div>
        )}
      </div>
      {graded && (
        <div class="question-actions">
          <button type="button" class="button" ref={afterGrade} onClick={tryAgain}>
            Try again
          </button>
        </div>
      )}
    </section>
  );
}

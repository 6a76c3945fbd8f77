/** A pipeline exercise: the task, the code editor, grading followed live, the result and past submissions. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { describeError } from "../api/errors";
import type { components } from "../api/schema";
import { ErrorMessage, Loading, PageTitle } from "../components/common";
import type { CodeEditor } from "../exercise/editor";
import * as X from "../exercise/logic";
import { GradingProgress, PastSubmissions, ResultView } from "../exercise/results";
import { formatMoment } from "../format";
import { usePolling, useTitle } from "../hooks";
import { parseInline } from "../text";

type ExerciseData = components["schemas"]["ExerciseOutput"];
type Submission = X.Submission;
type Result = components["schemas"]["GradingResultOutput"];

const EDITOR_HELP =
  "Tab indents. To leave the editor press Escape, then Tab. Ctrl+Enter (⌘+Enter on a Mac) submits the code.";

function storage(): X.DraftStorage | null {
  try {
    return localStorage;
  } catch {
    return null;
  }
}

async function loadExercise(slug: string): Promise<{ exercise: ExerciseData; submissions: Submission[] }> {
  const [exercise, page] = await Promise.all([
    call(client.GET("/api/v1/exercises/{slug}/", { params: { path: { slug } } })),
    call(client.GET("/api/v1/submissions/", { params: { query: { exercise: slug, page_size: 20 } } })),
  ]);
  return { exercise, submissions: page.results };
}

export default function Exercise({ slug }: { slug: string }) {
  const [data, setData] = useState<{ exercise: ExerciseData; submissions: Submission[] } | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  useTitle(data ? data.exercise.title : "Exercise");

  useEffect(() => {
    let live = true;
    setLoadError(null);
    loadExercise(slug).then(
      (loaded) => live && setData(loaded),
      (error: unknown) => live && setLoadError(describeError(error)),
    );
    return () => {
      live = false;
    };
  }, [slug, attempt]);

  if (loadError !== null) return <ErrorMessage message={loadError} onRetry={() => setAttempt((n) => n + 1)} />;
  if (data === null) return <Loading />;
  return <ExerciseView exercise={data.exercise} initialSubmissions={data.submissions} />;
}

function ExerciseView({ exercise, initialSubmissions }: { exercise: ExerciseData; initialSubmissions: Submission[] }) {
  const slug = exercise.slug;
  const editorHost = useRef<HTMLDivElement>(null);
  const editor = useRef<CodeEditor | null>(null);
  const [editorState, setEditorState] = useState<"loading" | "ready" | string>("loading");
  const [editorAttempt, setEditorAttempt] = useState(0);
  const [submissions, setSubmissions] = useState<Submission[]>(initialSubmissions);
  // The submission shown under the editor: the newest one at first, then whichever the learner picks.
  const [shownId, setShownId] = useState<number | null>(initialSubmissions[0]?.id ?? null);
  const [sending, setSending] = useState(false);
  const [sendError, setSendError] = useState<string | null>(null);
  const [pollError, setPollError] = useState<string | null>(null);
  const [notice, setNotice] = useState("");
  // Counts edits, so what depends on the editor's text (does it hold the shown code?) is drawn again.
  const [, setDocVersion] = useState(0);
  const submitRef = useRef<() => void>(() => undefined);
  const gradingRef = useRef<HTMLElement>(null);

  const shown = submissions.find((item) => item.id === shownId) ?? null;

  // The editor comes in its own chunk; the task is readable before it arrives.
  useEffect(() => {
    let live = true;
    setEditorState("loading");
    import("../exercise/editor").then(
      ({ createEditor }) => {
        if (!live || !editorHost.current) return;
        editor.current = createEditor(editorHost.current, {
          doc: X.draftRead(storage(), slug, exercise.starter_code),
          label: "Your code",
          description: EDITOR_HELP,
          onChange: (code) => {
            X.draftWrite(storage(), slug, code, exercise.starter_code);
            setDocVersion((n) => n + 1);
          },
          onSubmit: () => submitRef.current(),
        });
        setEditorState("ready");
      },
      (error: unknown) => live && setEditorState(describeError(error)),
    );
    return () => {
      live = false;
      editor.current?.destroy();
      editor.current = null;
    };
  }, [slug, exercise.starter_code, editorAttempt]);

  const track = useCallback((submission: Submission) => {
    setSubmissions((list) => X.upsertSubmission(list, submission));
  }, []);

  // Follows every unfinished submission shown until its grading ends.
  const pending = shown !== null && !X.isFinished(shown.status) ? shown.id : null;
  usePolling(
    pending !== null,
    () => call(client.GET("/api/v1/submissions/{submission_id}/", { params: { path: { submission_id: pending ?? 0 } } })),
    {
      delay: X.pollDelay,
      onAnswer: (fresh) => {
        setPollError(null);
        track(fresh);
        return X.isFinished(fresh.status);
      },
      onError: (error) => {
        setPollError(`${describeError(error)} Still trying.`);
        return false;
      },
    },
    [pending],
  );

  // Lint findings are marked on their lines while the editor holds the code they were found in.
  const shownFindings = shown && X.isFinished(shown.status) ? (shown.result?.lint ?? []) : [];
  const codeMatches = editorState === "ready" && shown !== null && editor.current?.getDoc() === shown.code;
  useEffect(() => {
    if (editorState !== "ready" || !editor.current) return;
    if (shown && X.isFinished(shown.status) && editor.current.getDoc() === shown.code) {
      editor.current.showFindings(shownFindings);
    } else if (!shown || shown.code !== editor.current.getDoc()) {
      editor.current.clearFindings();
    }
    // Edits move the markers with the text; only a new result or another submission resets them.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [editorState, shown?.id, shown?.status]);

  const submit = useCallback(async () => {
    if (sending || !editor.current) return;
    const code = editor.current.getDoc();
    if (code.trim() === "") {
      setSendError("Write some code first: the editor is empty.");
      return;
    }
    setSending(true);
    setSendError(null);
    setNotice("");
    try {
      const created = await call(
        client.POST("/api/v1/exercises/{slug}/submissions/", {
          params: { path: { slug } },
          body: { code, client_submission_id: X.newClientId() },
        }),
      );
      const submission = await call(
        client.GET("/api/v1/submissions/{submission_id}/", { params: { path: { submission_id: created.id } } }),
      );
      track(submission);
      setShownId(submission.id);
      // The grading's progress replaces the result below the editor: keep it in view.
      requestAnimationFrame(() => gradingRef.current?.scrollIntoView({ block: "nearest" }));
    } catch (error) {
      setSendError(describeError(error));
    } finally {
      setSending(false);
    }
  }, [sending, slug, track]);
  submitRef.current = () => void submit();

  const reset = () => {
    if (!editor.current) return;
    editor.current.setDoc(exercise.starter_code);
    editor.current.focus();
    setNotice("The starter code is back. Ctrl+Z (⌘+Z) in the editor brings your code back.");
  };

  const loadCode = (submission: Submission) => {
    if (!editor.current) return;
    editor.current.setDoc(submission.code);
    editor.current.showFindings(submission.result?.lint ?? []);
    editor.current.focus();
    setNotice(`The code of submission ${submission.id} is in the editor.`);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    // Inside the editor CodeMirror has already taken Ctrl+Enter (and marked it handled).
    if (event.defaultPrevented || event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
    event.preventDefault();
    void submit();
  };

  return (
    <article class="exercise" onKeyDown={onKeyDown}>
      <p class="eyebrow">Pipeline exercise</p>
      <PageTitle>{exercise.title}</PageTitle>
      {exercise.lesson && (
        <p class="meta">
          <a href={`/lessons/${encodeURIComponent(exercise.lesson)}`}>Back to the lesson</a>
        </p>
      )}

      <section class="exercise-task" aria-labelledby="task-heading">
        <h2 id="task-heading">The task</h2>
        <Prompt text={exercise.prompt} />
        <p class="meta">
          Your code must define <code>{exercise.entry_point}</code>.
        </p>
      </section>

      {exercise.concepts.length > 0 && <PractisedConcepts concepts={exercise.concepts} />}

      <section class="exercise-code" aria-labelledby="code-heading">
        <h2 id="code-heading">Your code</h2>
        <p class="hint" id="editor-help">
          {EDITOR_HELP} Your draft is kept in this browser.
        </p>
        <div class="exercise-editor" ref={editorHost} />
        {editorState === "loading" && <Loading label="Loading the editor…" />}
        {editorState !== "loading" && editorState !== "ready" && (
          <ErrorMessage message={editorState} onRetry={() => setEditorAttempt((n) => n + 1)} />
        )}
        <div class="exercise-actions">
          <button
            type="button"
            class="button primary"
            onClick={() => void submit()}
            disabled={sending || editorState !== "ready"}
            aria-keyshortcuts="Control+Enter Meta+Enter"
          >
            {sending ? "Sending…" : "Submit for grading"}
          </button>
          <button type="button" class="button secondary" onClick={reset} disabled={editorState !== "ready"}>
            Reset to starter code
          </button>
        </div>
        <p class="exercise-notice" role="status">
          {notice}
        </p>
        {sendError !== null && <ErrorMessage message={sendError} />}
      </section>

      <section class="exercise-grading" aria-labelledby="grading-heading" ref={gradingRef}>
        <h2 id="grading-heading">{shown && X.isFinished(shown.status) ? "Result" : "Grading"}</h2>
        {shown === null ? (
          <p class="meta">Nothing submitted yet. Submit your code to have it checked and timed.</p>
        ) : (
          <>
            <p class="meta">
              Submission {shown.id}, sent {formatMoment(shown.created_at)}
            </p>
            {pollError !== null && pending !== null && <ErrorMessage message={pollError} />}
            {X.isFinished(shown.status) ? (
              <ResultView submission={shown} codeMatches={codeMatches} onLoadCode={loadCode} />
            ) : (
              <GradingProgress submission={shown} />
            )}
          </>
        )}
      </section>

      <PastSubmissions submissions={submissions} shownId={shownId} onShow={setShownId} />
    </article>
  );
}

function Inline({ text }: { text: string }) {
  return (
    <>
      {parseInline(text).map((part, index) =>
        part.code ? <code key={index}>{part.text}</code> : part.strong ? <strong key={index}>{part.text}</strong> : part.text,
      )}
    </>
  );
}

function Prompt({ text }: { text: string }) {
  return (
    <div class="exercise-prompt">
      {X.parsePrompt(text).map((block, index) => {
        if (block.kind === "code")
          return (
            <pre key={index} tabIndex={0} aria-label="Code from the task">
              <code>{block.code}</code>
            </pre>
          );
        if (block.kind === "list")
          return (
            <ul key={index}>
              {block.items.map((item, itemIndex) => (
                <li key={itemIndex}>
                  <Inline text={item} />
                </li>
              ))}
            </ul>
          );
        return (
          <p key={index}>
            <Inline text={block.text} />
          </p>
        );
      })}
    </div>
  );
}

function PractisedConcepts({ concepts }: { concepts: X.PractisedConcept[] }) {
  return (
    <section class="exercise-concepts" aria-labelledby="concepts-heading">
      <h2 id="concepts-heading">What it practises</h2>
      <ul>
        {concepts.map((concept) => (
          <li key={concept.slug}>
            <strong>{concept.name}</strong>
            {concept.cards.length > 0 && <>: {concept.cards.map((card) => card.term).join(", ")}</>}
          </li>
        ))}
      </ul>
      {X.practisedDecks(concepts).map((deck) => (
        <p key={deck} class="meta">
          <a href={`/decks/${encodeURIComponent(deck)}/study`}>Review these cards in their deck</a>
        </p>
      ))}
    </section>
  );
}

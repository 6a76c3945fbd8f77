/** Memory Deck study: flip the card, rate how well you knew it, undo, until nothing is due. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { ApiProblem, describeError, isNetworkFailure } from "../api/errors";
import { ErrorMessage, Loading, NothingHere, PageTitle } from "../components/common";
import { RichText } from "../components/RichText";
import { ShortcutsHelp, type Shortcut } from "../components/Shortcuts";
import { describeInterval, formatInterval, formatMoment, plural } from "../format";
import { useTitle } from "../hooks";
import { waitingText } from "../offline/queue";
import { DailyGoal } from "../goal/DailyGoal";
import { goalAfter, type Goal } from "../goal/goal";
import { keepStudy, keptStudy } from "../offline/keptStudy";
import { enqueue, reachedServer, syncNow, useSyncStatus, waitingCardIds, withdraw } from "../offline/sync";
import { makeReview, postReview, undoReview } from "../reviews";
import { getSession } from "../session";
import * as S from "../study";

const COMMON_KEYS: Shortcut[] = [
  { keys: ["Space"], does: "Flip the card" },
  { keys: ["Z"], does: "Undo the last rating" },
  { keys: ["?"], does: "List these shortcuts" },
];
const FOUR_RATING_KEYS: Shortcut[] = [
  ...COMMON_KEYS.slice(0, 1),
  { keys: ["1"], does: "Again: I did not remember it" },
  { keys: ["2"], does: "Hard: I remembered it with difficulty" },
  { keys: ["3"], does: "Good: I remembered it" },
  { keys: ["4"], does: "Easy: I remembered it at once" },
  ...COMMON_KEYS.slice(1),
];
const TWO_RATING_KEYS: Shortcut[] = [
  ...COMMON_KEYS.slice(0, 1),
  { keys: ["1"], does: "I did not know it" },
  { keys: ["2"], does: "I knew it" },
  ...COMMON_KEYS.slice(1),
];

type Mode = "four" | "two";
const MODE_KEY = "quizsite.studyMode";

function storedMode(): Mode {
  try {
    return localStorage.getItem(MODE_KEY) === "two" ? "two" : "four";
  } catch {
    return "four";
  }
}

function typingOrActivating(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || /^(INPUT|TEXTAREA|SELECT|BUTTON|A|SUMMARY)$/.test(target.tagName);
}

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName);
}

export default function DeckStudy({ slug }: { slug: string }) {
  const [title, setTitle] = useState(slug);
  useTitle(`Study ${title}`);
  const [state, setState] = useState<S.StudyState | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  // The deck does not exist, or the learner may not study it: asking again cannot help.
  const [missing, setMissing] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);
  const [busy, setBusyState] = useState(false);
  // Read by handlers before the next render: a second key press must not rate the same card twice.
  const busyNow = useRef(false);
  const setBusy = useCallback((value: boolean) => {
    busyNow.current = value;
    setBusyState(value);
  }, []);
  const [mode, setMode] = useState<Mode>(storedMode);
  const shownAt = useRef(performance.now());
  const flipButton = useRef<HTMLButtonElement>(null);
  const answer = useRef<HTMLDivElement>(null);
  const sync = useSyncStatus();
  // When the queue shown is the copy kept on this device (no connection), when the server sent it.
  const [keptAt, setKeptAt] = useState<string | null>(null);
  const titleNow = useRef<string | null>(null);
  const [goal, setGoal] = useState<Goal | null>(null);
  // Said once when this session's reviews reach the daily goal.
  const [goalMetNow, setGoalMetNow] = useState(false);
  const countTowardGoal = useCallback((delta: number) => {
    setGoal((before) => {
      if (before === null) return before;
      const after = goalAfter(before, delta);
      if (after.met && !before.met) setGoalMetNow(true);
      return after;
    });
  }, []);
  // Reviews kept on this device show here until sent; the header's live region announces the count.
  const waiting = sync.count;

  const load = useCallback(
    async (history: S.Done[] = []) => {
      setLoadError(null);
      setMissing(false);
      const session = getSession();
      const owner = session.status === "signed-in" ? session.me.id : null;
      try {
        const study = await call(client.GET("/api/v1/decks/{slug}/study/", { params: { path: { slug } } }));
        setState(S.startState(study, history));
        setKeptAt(null);
        shownAt.current = performance.now();
        if (owner !== null) keepStudy(owner, { slug, title: titleNow.current, study, keptAt: new Date().toISOString() });
      } catch (error) {
        if (isNetworkFailure(error) && owner !== null) {
          // No connection: study the queue this device kept, less the cards already reviewed on it.
          const kept = keptStudy(owner, slug, await waitingCardIds(owner));
          if (kept) {
            setState(S.startState(kept.study, history));
            setKeptAt(kept.keptAt);
            if (kept.title) setTitle(kept.title);
            shownAt.current = performance.now();
            return;
          }
        }
        setMissing(error instanceof ApiProblem && error.status === 404);
        setLoadError(describeError(error));
      }
    },
    [slug],
  );

  useEffect(() => {
    setState(null);
    void load();
    titleNow.current = null;
    call(client.GET("/api/v1/srs/goal/")).then(setGoal, () => setGoal(null));
    call(client.GET("/api/v1/decks/{slug}/", { params: { path: { slug } } })).then(
      (deck) => {
        setTitle(deck.title);
        titleNow.current = deck.title;
        const session = getSession();
        const owner = session.status === "signed-in" ? session.me.id : null;
        // The kept queue is named by the deck's title too, for the home page without a connection.
        const kept = owner === null ? null : keptStudy(owner, slug);
        if (owner !== null && kept && kept.title !== deck.title) keepStudy(owner, { ...kept, title: deck.title });
      },
      () => undefined,
    );
  }, [slug, load]);

  const current = state?.items[0] ?? null;

  const doFlip = useCallback(() => {
    setState((s) => (s ? S.flip(s) : s));
    requestAnimationFrame(() => answer.current?.focus());
  }, []);

  const rate = useCallback(
    async (answerValue: { rating: S.Rating } | { knew: boolean }) => {
      if (!state || !current || !state.flipped || busyNow.current) return;
      setBusy(true);
      setActionError(null);
      const review = makeReview(current.card.id, answerValue, performance.now() - shownAt.current);
      let reviewId: number | null;
      try {
        reviewId = (await postReview(review)).id;
        reachedServer();
      } catch (error) {
        const session = getSession();
        if (!isNetworkFailure(error) || session.status !== "signed-in") {
          setActionError(describeError(error));
          setBusy(false);
          return;
        }
        // No answer at all: keep the review on this device and go on; it is sent when the connection returns.
        try {
          await enqueue(session.me.id, review, current.card.term);
          reviewId = null;
        } catch {
          setActionError(
            "Could not reach the server, and this browser could not keep the review for later. Check your connection and try again.",
          );
          setBusy(false);
          return;
        }
      }
      const next = S.reviewed(state, reviewId, review.client_review_id);
      countTowardGoal(1);
      // The card leaves the screen even if the next cards cannot be loaded now.
      setState(next);
      if (next.items.length === 0 && reviewId !== null) await load(next.history);
      shownAt.current = performance.now();
      setBusy(false);
      requestAnimationFrame(() => flipButton.current?.focus());
    },
    [state, current, load, setBusy, countTowardGoal],
  );

  const undo = useCallback(async () => {
    if (!state || busyNow.current) return;
    const last = S.undoable(state);
    if (!last) return;
    setBusy(true);
    setActionError(null);
    try {
      let reviewId = last.reviewId;
      if (reviewId === null) {
        // Made offline: taken back from this device if still waiting, else undone where it was sent.
        const session = getSession();
        if (session.status !== "signed-in") return;
        const withdrawal = await withdraw(session.me.id, last.clientReviewId);
        reviewId = withdrawal.kind === "sent" ? withdrawal.reviewId : null;
      }
      if (reviewId !== null) await undoReview(reviewId);
      setState(S.undone(state));
      countTowardGoal(-1);
      shownAt.current = performance.now();
      requestAnimationFrame(() => flipButton.current?.focus());
    } catch (error) {
      setActionError(describeError(error));
    } finally {
      setBusy(false);
    }
  }, [state, setBusy, countTowardGoal]);

  // The listener reads what the latest render saw: effects run a frame late, and a key pressed as soon as a
  // button shows must already act on it.
  const keys = useRef({ state, current, mode, doFlip, rate, undo });
  const shortcuts = useRef<HTMLDialogElement | null>(null);
  keys.current = { state, current, mode, doFlip, rate, undo };

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      const { state, current, mode, doFlip, rate, undo } = keys.current;
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      // While the shortcuts are listed, keys are the dialog's (Escape closes it).
      if (shortcuts.current?.open) return;
      if (event.key === " " && !typingOrActivating(event.target)) {
        if (state && !state.flipped && current) {
          event.preventDefault();
          doFlip();
        }
        return;
      }
      if (event.key === "z" || event.key === "Z") {
        event.preventDefault();
        void undo();
        return;
      }
      if (event.key === "?") {
        event.preventDefault();
        if (!shortcuts.current?.open) shortcuts.current?.showModal();
        return;
      }
      if (!state?.flipped) return;
      const digit = Number(event.key);
      if (mode === "four" && digit >= 1 && digit <= 4) {
        event.preventDefault();
        void rate({ rating: digit as S.Rating });
      } else if (mode === "two" && (digit === 1 || digit === 2)) {
        event.preventDefault();
        void rate({ knew: digit === 2 });
      }
    }
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  function chooseMode(next: Mode) {
    setMode(next);
    try {
      localStorage.setItem(MODE_KEY, next);
    } catch {
      // Only the preference is lost.
    }
  }

  if (loadError !== null && state === null) {
    return (
      <>
        <PageTitle>Study {title}</PageTitle>
        {missing ? <NothingHere /> : <ErrorMessage message={loadError} onRetry={() => void load()} />}
      </>
    );
  }
  if (state === null) {
    return (
      <>
        <PageTitle>Study {title}</PageTitle>
        <Loading label="Loading your cards…" />
      </>
    );
  }

  const canUndo = S.undoable(state) !== null;
  return (
    <div class="study">
      <PageTitle>Study {title}</PageTitle>
      <div class="study-bar">
        <p class="counts" aria-label="Cards left">
          <span class="count count-learning">
            <span class="count-number">{state.counts.learning}</span> learning
          </span>
          <span class="count count-review">
            <span class="count-number">{state.counts.review}</span> to review
          </span>
          <span class="count count-new">
            <span class="count-number">{state.counts.new}</span> new
          </span>
        </p>
        <fieldset class="mode">
          <legend class="visually-hidden">Answer buttons</legend>
          <label>
            <input type="radio" name="mode" checked={mode === "four"} onChange={() => chooseMode("four")} /> Four ratings
          </label>
          <label>
            <input type="radio" name="mode" checked={mode === "two"} onChange={() => chooseMode("two")} /> Knew it or not
          </label>
        </fieldset>
      </div>
      {goal !== null && <DailyGoal goal={goal} compact />}
      <p class="visually-hidden" role="status">
        {goalMetNow && goal?.met ? `Daily goal met: ${goal.reviews_today} reviews today.` : ""}
      </p>
      {actionError !== null && <ErrorMessage message={actionError} />}
      {loadError !== null && <ErrorMessage message={loadError} onRetry={() => void load(state.history)} />}
      {(sync.offline || waiting > 0 || keptAt !== null) && (
        <section class="offline-note" aria-labelledby="offline-title">
          <h2 id="offline-title">{sync.offline || keptAt !== null ? "Studying offline" : "Reviews waiting to sync"}</h2>
          {keptAt !== null && (
            <p class="offline-kept">
              These are the cards this device kept when the deck was last loaded, {formatMoment(keptAt)}.
            </p>
          )}
          <p>
            {waiting > 0 ? (
              <>
                <strong class="offline-count">{waitingText(waiting)}</strong>, kept on this device
                {sync.persistent ? "" : " until this page is closed"}.{" "}
              </>
            ) : (
              "Reviews you make now are kept on this device. "
            )}
            They are sent as soon as the connection returns.
          </p>
          {sync.offline && current && (
            <p class="offline-intervals">
              The times on the rating buttons were worked out before the connection was lost; the server sets the
              real ones when your reviews arrive.
            </p>
          )}
          {waiting > 0 && (
            <button type="button" class="button secondary" disabled={sync.syncing} onClick={() => void syncNow()}>
              {sync.syncing ? "Sending…" : "Send now"}
            </button>
          )}
        </section>
      )}
      {current ? (
        <section class="flashcard" aria-label="Card">
          <div class="card-face front">
            <p class="face-label">{current.queue === "new" ? "New card" : current.queue === "learning" ? "Learning" : "Review"}</p>
            <p class="term">{current.card.term}</p>
          </div>
          {state.flipped ? (
            <div class="card-face back" ref={answer} tabIndex={-1} aria-label="Answer">
              <RichText text={current.card.definition} format={current.card.format} />
              {current.card.example && (
                <div class="example">
                  <p class="face-label">Example</p>
                  <RichText text={current.card.example} format={current.card.format} />
                </div>
              )}
              {current.card.code && (
                <pre tabIndex={0} aria-label="Code">
                  <code>{current.card.code}</code>
                </pre>
              )}
            </div>
          ) : null}
          <div class="actions">
            {!state.flipped ? (
              <button type="button" class="button primary big" ref={flipButton} aria-keyshortcuts="Space" onClick={doFlip}>
                Flip <kbd aria-hidden="true">Space</kbd>
              </button>
            ) : mode === "four" ? (
              <div class="ratings" role="group" aria-label="How well did you know it?">
                {S.RATINGS.map(({ rating, label, key }) => {
                  const seconds = current.next_intervals[key];
                  return (
                    <button
                      key={rating}
                      type="button"
                      class={`button rating rating-${key}`}
                      disabled={busy}
                      aria-keyshortcuts={String(rating)}
                      title={`Next in ${describeInterval(seconds)}`}
                      onClick={() => void rate({ rating })}
                    >
                      <span class="rating-label">{label}</span>
                      <span class="rating-interval">{formatInterval(seconds)}</span>
                      <kbd aria-hidden="true">{rating}</kbd>
                    </button>
                  );
                })}
              </div>
            ) : (
              <div class="ratings two" role="group" aria-label="Did you know it?">
                <button
                  type="button"
                  class="button rating rating-again"
                  disabled={busy}
                  onClick={() => void rate({ knew: false })}
                >
                  <span class="rating-label">Didn't know</span>
                  <span class="rating-interval">{formatInterval(current.next_intervals.again)}</span>
                  <kbd aria-hidden="true">1</kbd>
                </button>
                <button
                  type="button"
                  class="button rating rating-good"
                  disabled={busy}
                  onClick={() => void rate({ knew: true })}
                >
                  <span class="rating-label">Knew it</span>
                  <span class="rating-interval">{formatInterval(current.next_intervals.good)}</span>
                  <kbd aria-hidden="true">2</kbd>
                </button>
              </div>
            )}
          </div>
        </section>
      ) : (
        <section class="card end-screen" aria-labelledby="done-title">
          <h2 id="done-title">Nothing more to study now</h2>
          <p>
            {state.history.length > 0
              ? `You reviewed ${plural(state.history.length, "card", "cards")} in this session.`
              : "No cards of this deck are due right now."}{" "}
            Cards you are still learning come back in a few minutes; reviews come back on their day.
          </p>
          <p class="end-actions">
            <button type="button" class="button secondary" onClick={() => void load(state.history)}>
              Check again
            </button>
            <a class="button secondary" href="/">
              Back to home
            </a>
          </p>
        </section>
      )}
      <p class="study-tools">
        <ShortcutsHelp shortcuts={mode === "four" ? FOUR_RATING_KEYS : TWO_RATING_KEYS} dialogRef={shortcuts} />
        <button type="button" class="button secondary" disabled={!canUndo || busy} aria-keyshortcuts="z" onClick={() => void undo()}>
          Undo <kbd aria-hidden="true">Z</kbd>
        </button>
      </p>
      <p class="visually-hidden" aria-live="polite">
        {current ? `${plural(S.remaining(state.counts), "card", "cards")} left.` : "Session finished."}
      </p>
    </div>
  );
}

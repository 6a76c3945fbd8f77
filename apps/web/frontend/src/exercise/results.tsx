/** What a learner sees of a submission: grading followed live, the result (checks, timing, hints), and the
 * list of past submissions. The page (pages/Exercise.tsx) holds the task, the editor and submitting. */
import type { components } from "../api/schema";
import { formatMoment, plural } from "../format";
import * as X from "./logic";

type Submission = X.Submission;
type Result = components["schemas"]["GradingResultOutput"];


export function GradingProgress({ submission }: { submission: Submission }) {
  const current = X.phaseIndex(submission.status);
  const value = X.percent(submission.progress);
  return (
    <div class="grading-progress">
      <p class="grading-status" role="status">
        <strong>{submission.phase.label}…</strong>{" "}
        {X.phaseProgressText(submission.phase) && (
          <span class="grading-detail">{X.phaseProgressText(submission.phase)}</span>
        )}
      </p>
      <div class="grading-bar">
        <progress id="grading-progress" max={100} value={value} aria-label="Grading progress" />
        <span class="grading-percent" aria-hidden="true">
          {value}%
        </span>
      </div>
      <ol class="grading-phases">
        {X.PHASES.map((phase, index) => (
          <li
            key={phase.status}
            class={index < current ? "phase-done" : index === current ? "phase-current" : "phase-todo"}
            aria-current={index === current ? "step" : undefined}
          >
            {phase.label}
            {index < current && <span class="visually-hidden"> (done)</span>}
          </li>
        ))}
      </ol>
    </div>
  );
}

export function ResultView({
  submission,
  codeMatches,
  onLoadCode,
}: {
  submission: Submission;
  codeMatches: boolean;
  onLoadCode: (submission: Submission) => void;
}) {
  const result = submission.result;
  if (submission.status === "failed" || result === null) {
    return (
      <div class="alert alert-error" role="alert">
        <p>
          <strong>This submission could not be graded.</strong>
        </p>
        <p>{submission.error || "The grader stopped before it finished."} Submitting again usually works.</p>
      </div>
    );
  }
  const accepted = result.verdict === "accepted";
  return (
    <div class="exercise-result">
      <div class={`result-summary ${accepted ? "result-accepted" : "result-refused"}`} role="status">
        <p class="result-verdict">
          <strong>{X.verdictLabel(result.verdict)}</strong>
        </p>
        <p class="result-score">
          Score <strong data-score>{X.formatScore(result.score.total, result.score.max)}</strong>
        </p>
        <p class="meta">Points: {X.scoreParts(result.score)}</p>
        {result.message && <p>{result.message}</p>}
      </div>
      <Checks result={result} />
      <TimingView result={result} />
      <ProfileView result={result} />
      <LintList
        result={result}
        codeMatches={codeMatches}
        onLoadCode={() => onLoadCode(submission)}
      />
      {result.output.trim() && (
        <details class="result-output">
          <summary>What your code printed</summary>
          <pre tabIndex={0}>
            <code>{result.output}</code>
          </pre>
        </details>
      )}
      {!codeMatches && (
        <p>
          <button type="button" class="button secondary" onClick={() => onLoadCode(submission)}>
            Put this submission’s code in the editor
          </button>
        </p>
      )}
    </div>
  );
}

function Checks({ result }: { result: Result }) {
  if (result.checks.length === 0) return null;
  const tally = X.checkTally(result.checks);
  return (
    <section aria-labelledby="checks-heading">
      <h3 id="checks-heading">Checks: {tally}</h3>
      <ul class="result-checks">
        {result.checks.map((check) => {
          const outcome = X.checkOutcome(check);
          return (
            <li key={check.name} class={`check-${outcome === "not run" ? "skipped" : outcome === "passed" ? "pass" : "fail"}`}>
              <span class="check-mark" aria-hidden="true">
                {outcome === "passed" ? "✓" : outcome === "failed" ? "✗" : "–"}
              </span>
              <span>
                <strong>{check.name}</strong> <span class="check-outcome">{outcome}</span>
                {check.message && <span class="check-message">: {check.message}</span>}
              </span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function TimingView({ result }: { result: Result }) {
  const timing = result.timing;
  if (timing === null) return null;
  const bars = X.timingBars(timing);
  const speedup = result.speedup;
  const lines = [
    X.speedupText(speedup?.vs_naive, "naive reference"),
    X.speedupText(speedup?.vs_expert, "expert reference"),
  ].filter(Boolean);
  return (
    <section aria-labelledby="timing-heading">
      <h3 id="timing-heading">Speed</h3>
      {lines.length > 0 && <p>Your pipeline is {lines.join(", and ")}.</p>}
      <table class="timing-table">
        <caption>Time per epoch, shorter is faster</caption>
        <thead>
          <tr>
            <th scope="col">Pipeline</th>
            <th scope="col">
              <span class="visually-hidden">Bar</span>
            </th>
            <th scope="col">Seconds</th>
          </tr>
        </thead>
        <tbody>
          {bars.map((bar) => (
            <tr key={bar.key} class={`timing-${bar.key}`}>
              <th scope="row">{bar.label}</th>
              <td class="timing-bar-cell" aria-hidden="true">
                <span class="timing-bar" style={{ width: `${Math.max(1, Math.round(bar.fraction * 100))}%` }} />
              </td>
              <td class="timing-seconds">{X.formatSeconds(bar.seconds)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="meta">
        {plural(timing.submission.measured_epochs, "epoch", "epochs")} measured on {result.device || "CPU"}.{" "}
        {timing.host?.references?.timed === "stored" &&
          "The naive reference’s time is this grading host’s stored measurement, scaled by how fast the expert reference ran here. "}
        {timing.note}
      </p>
    </section>
  );
}

function ProfileView({ result }: { result: Result }) {
  const profile = result.profile;
  if (!profile || profile.stages.length === 0) return null;
  const bars = X.stageBars(profile);
  const bound = X.inputBoundText(profile.input_bound);
  return (
    <section aria-labelledby="profile-heading">
      <h3 id="profile-heading">Where the time goes</h3>
      {bound && (
        <p class={`input-bound input-bound-${profile.input_bound?.verdict}`} data-input-bound>
          <strong>{bound}.</strong>
        </p>
      )}
      <table class="stage-table">
        <caption>Each stage’s own time per batch, from the source to the last stage</caption>
        <thead>
          <tr>
            <th scope="col">Stage</th>
            <th scope="col">
              <span class="visually-hidden">Bar</span>
            </th>
            <th scope="col">Share</th>
            <th scope="col">Per batch</th>
          </tr>
        </thead>
        <tbody>
          {bars.map((bar) => (
            <tr key={bar.key} class={bar.slowest ? "stage-slowest" : undefined} data-stage={bar.kind}>
              <th scope="row">
                {bar.kind} <span class="meta">{bar.operation}{bar.parallel ? ", runs ahead" : ""}</span>
                {bar.slowest && <span class="stage-flag"> slowest</span>}
              </th>
              <td class="timing-bar-cell" aria-hidden="true">
                <span class="stage-bar" style={{ width: `${Math.max(1, Math.round(bar.share * 100))}%` }} />
              </td>
              <td class="stage-share">{X.sharePercent(bar.share)}</td>
              <td class="timing-seconds">{X.formatSeconds(bar.seconds)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p data-profile-advice>{profile.advice}</p>
      <p class="meta">
        Traced with TensorFlow’s profiler over the first checking epoch ({plural(profile.batches, "batch", "batches")}).
        A stage that runs ahead (prefetch, a parallel map) can hide the time of the stages before it.
      </p>
    </section>
  );
}

function LintList({ result, codeMatches, onLoadCode }: { result: Result; codeMatches: boolean; onLoadCode: () => void }) {
  if (result.lint.length === 0) {
    return (
      <section aria-labelledby="lint-heading">
        <h3 id="lint-heading">Advice</h3>
        <p>No pipeline pitfalls found in your code.</p>
      </section>
    );
  }
  return (
    <section aria-labelledby="lint-heading">
      <h3 id="lint-heading">Advice: {plural(result.lint.length, "finding", "findings")}</h3>
      <p class="meta">
        {codeMatches
          ? "Each is marked on its line in the editor."
          : "The editor holds other code now; the line numbers are those of this submission."}
        {!codeMatches && (
          <>
            {" "}
            <button type="button" class="button link-button" onClick={onLoadCode}>
              Show them in the editor
            </button>
          </>
        )}
      </p>
      <ul class="lint-list">
        {result.lint.map((finding, index) => (
          <li key={index}>
            <strong>Line {finding.line}</strong>: {finding.message} <span class="meta">({finding.rule})</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function PastSubmissions({
  submissions,
  shownId,
  onShow,
}: {
  submissions: Submission[];
  shownId: number | null;
  onShow: (id: number) => void;
}) {
  return (
    <section class="exercise-history" aria-labelledby="history-heading">
      <h2 id="history-heading">Past submissions</h2>
      {submissions.length === 0 ? (
        <p class="meta">None yet.</p>
      ) : (
        <ol class="submission-list" reversed>
          {submissions.map((item) => (
            <li key={item.id}>
              <button
                type="button"
                class="button link-button"
                aria-pressed={item.id === shownId}
                onClick={() => onShow(item.id)}
              >
                Submission {item.id}
              </button>{" "}
              <span class="meta">
                {formatMoment(item.created_at)} ·{" "}
                {X.isFinished(item.status)
                  ? item.status === "failed"
                    ? "not graded"
                    : `${X.verdictLabel(item.verdict)}, ${X.formatScore(item.score ?? 0, item.result?.score.max ?? 100)}`
                  : `${X.statusLabel(item.status)} (${X.percent(item.progress)}%)`}
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

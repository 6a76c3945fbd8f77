/** One graded answer: the verdict, partial credit, the learner's answer beside the key, and the explanation. */
import { RichText } from "../components/RichText";
import {
  VERDICT_LABEL,
  correctLines,
  creditLine,
  responseLines,
  verdictOf,
  type Graded,
  type Question,
} from "./logic";

function Lines({ lines }: { lines: string[] }) {
  if (lines.length === 0) return <>—</>;
  if (lines.length === 1) return <>{lines[0]}</>;
  return (
    <ul class="quiz-lines">
      {lines.map((line, index) => (
        <li key={index}>{line}</li>
      ))}
    </ul>
  );
}

export function VerdictBadge({ answer }: { answer: Graded | undefined }) {
  const verdict = verdictOf(answer);
  return <span class={`quiz-badge quiz-badge-${verdict}`}>{VERDICT_LABEL[verdict]}</span>;
}

/** `badge` false where the verdict is already shown beside the question's heading. */
export function AnswerReview({
  question,
  answer,
  badge = true,
}: {
  question: Question;
  answer: Graded | undefined;
  badge?: boolean;
}) {
  if (answer === undefined) {
    return (
      <div class="quiz-review">
        <p>
          {badge && <VerdictBadge answer={answer} />} Not answered: this question counts 0.
        </p>
      </div>
    );
  }
  const accepted = question.kind === "short_text";
  return (
    <div class="quiz-review">
      <p class="quiz-verdict">
        {badge && <VerdictBadge answer={answer} />}
        <span class="quiz-credit">
          {badge ? " " : ""}
          {creditLine(question, answer)}
        </span>
      </p>
      <dl class="quiz-compare">
        <div>
          <dt>Your answer</dt>
          <dd>
            <Lines lines={responseLines(question, answer)} />
          </dd>
        </div>
        <div>
          <dt>{accepted ? "Accepted answers" : question.kind === "multiple_choice" ? "Correct answers" : "Correct answer"}</dt>
          <dd>
            <Lines lines={correctLines(question, answer)} />
          </dd>
        </div>
      </dl>
      {answer.explanation && (
        <div class="quiz-explanation">
          <p class="quiz-explanation-title">Why</p>
          <RichText text={answer.explanation} />
        </div>
      )}
    </div>
  );
}

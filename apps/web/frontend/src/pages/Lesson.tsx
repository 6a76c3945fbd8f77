/** A lesson, section by section, every block kind of the API rendered as safe text; its questions answered in place. */
import { call, client } from "../api/client";
import type { components } from "../api/schema";
import { Await, PageTitle } from "../components/common";
import { RichText } from "../components/RichText";
import { useLoad, useTitle } from "../hooks";
import { CodeBlock } from "../lesson/CodeBlock";
import { InlineQuestion } from "../questions/InlineQuestion";

type S = components["schemas"];
type Block = S["LessonBlock"];
type Quiz = S["QuizOutput"];
type LastAnswers = Map<string, S["LessonLastAnswerOutput"]>;

async function loadLesson(slug: string): Promise<{ lesson: S["LessonOutput"]; quizzes: Quiz[]; last: LastAnswers }> {
  const [lesson, quizzes, answers] = await Promise.all([
    call(client.GET("/api/v1/lessons/{slug}/", { params: { path: { slug } } })),
    call(client.GET("/api/v1/quizzes/", { params: { query: { lesson: slug, page_size: 200 } } })),
    // The learner's earlier answers only fill the questions in again: the lesson reads without them.
    call(client.GET("/api/v1/lessons/{slug}/answers/", { params: { path: { slug } } })).catch(() => null),
  ]);
  const last: LastAnswers = new Map((answers?.answers ?? []).map((answer) => [answer.question, answer]));
  return { lesson, quizzes: quizzes.results, last };
}

export default function LessonPage({ slug }: { slug: string }) {
  const [value, retry] = useLoad(() => loadLesson(slug), [slug]);
  useTitle(value.state === "ready" ? value.data.lesson.title : "Lesson");
  return (
    <Await value={value} retry={retry}>
      {({ lesson, quizzes, last }) => (
        <article class="lesson">
          <p class="eyebrow">
            {lesson.subject}
            {lesson.manual && ` · ${lesson.manual}`}
          </p>
          <PageTitle>{lesson.title}</PageTitle>
          {lesson.summary && <p class="lead">{lesson.summary}</p>}
          {lesson.sections.length > 1 && (
            <nav aria-label="Sections" class="toc">
              <h2 class="toc-title">In this lesson</h2>
              <ol>
                {lesson.sections.map((section) => (
                  <li key={section.slug}>
                    <a href={`#${section.slug}`}>{section.title}</a>
                  </li>
                ))}
              </ol>
            </nav>
          )}
          {lesson.sections.map((section) => (
            <section key={section.slug} id={section.slug} aria-labelledby={`h-${section.slug}`} class="lesson-section">
              <h2 id={`h-${section.slug}`}>{section.title}</h2>
              {section.blocks.map((block, index) => (
                <BlockView key={index} block={block} last={last} />
              ))}
            </section>
          ))}
          <LessonLinks lesson={lesson} quizzes={quizzes} />
        </article>
      )}
    </Await>
  );
}

function BlockHeading({ text }: { text: string }) {
  return text ? <h3>{text}</h3> : null;
}

function BlockView({ block, last }: { block: Block; last: LastAnswers }) {
  // Options sit one level under the block's heading, or under the section's when it has none.
  const OptionHeading = block.heading ? "h4" : "h3";
  switch (block.kind) {
    case "prose":
      return (
        <div class="block prose">
          <BlockHeading text={block.heading} />
          <RichText text={block.text} />
        </div>
      );
    case "callout":
      return (
        <aside class={`block callout callout-${block.tone}`} aria-label={block.heading || toneLabel(block.tone)}>
          <p class="callout-title">
            <strong>{block.heading || toneLabel(block.tone)}</strong>
          </p>
          <RichText text={block.text} />
        </aside>
      );
    case "code":
      return <CodeBlock code={block.code} language={block.language || ""} heading={block.heading || ""} />;
    case "steps":
      return (
        <div class="block steps">
          <BlockHeading text={block.heading} />
          <ol>
            {block.steps.map((step, index) => (
              <li key={index}>{step}</li>
            ))}
          </ol>
        </div>
      );
    case "terms":
      return (
        <div class="block terms">
          <BlockHeading text={block.heading} />
          <dl>
            {block.items.map((item) => (
              <div key={item.card} class="term">
                <dt>{item.term}</dt>
                <dd>{item.definition}</dd>
              </div>
            ))}
          </dl>
        </div>
      );
    case "comparison":
      return (
        <div class="block comparison">
          <BlockHeading text={block.heading} />
          <div class="comparison-grid">
            {block.options.map((option) => (
              <section key={option.title} class="comparison-option" aria-label={option.title}>
                <OptionHeading>{option.title}</OptionHeading>
                <ul>
                  {option.points.map((point) => (
                    <li key={point}>{point}</li>
                  ))}
                </ul>
              </section>
            ))}
          </div>
        </div>
      );
    case "question":
      return (
        <InlineQuestion heading={block.heading} question={block.question} last={last.get(block.question.slug) ?? null} />
      );
    default:
      return <UnknownBlock block={block} />;
  }
}

/** A block kind this client does not know yet: its heading and any text it carries. */
function UnknownBlock({ block }: { block: never }) {
  const loose = block as { heading?: unknown; text?: unknown };
  return (
    <div class="block">
      {typeof loose.heading === "string" && <BlockHeading text={loose.heading} />}
      {typeof loose.text === "string" && <RichText text={loose.text} />}
    </div>
  );
}

function toneLabel(tone: string): string {
  return tone === "warning" ? "Warning" : tone === "tip" ? "Tip" : "Note";
}

function LessonLinks({ lesson, quizzes }: { lesson: S["LessonOutput"]; quizzes: Quiz[] }) {
  if (lesson.decks.length + quizzes.length + lesson.exercises.length === 0) return null;
  return (
    <section class="card lesson-links" aria-labelledby="practise">
      <h2 id="practise">Practise</h2>
      <ul class="link-list">
        {lesson.decks.map((deck) => (
          <li key={`d-${deck.slug}`}>
            <a href={`/decks/${encodeURIComponent(deck.slug)}/study`}>Study the deck “{deck.title}”</a>
          </li>
        ))}
        {quizzes.map((quiz) => (
          <li key={`q-${quiz.slug}`}>
            <a href={`/quizzes/${encodeURIComponent(quiz.slug)}`}>Quiz: {quiz.title}</a>
          </li>
        ))}
        {lesson.exercises.map((exercise) => (
          <li key={`e-${exercise.slug}`}>
            <a href={`/exercises/${encodeURIComponent(exercise.slug)}`}>Exercise: {exercise.title}</a>
          </li>
        ))}
      </ul>
    </section>
  );
}

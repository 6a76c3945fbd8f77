/** The learner's courses, each lesson with its decks (and what is due), quizzes and exercises. */
import { call, client } from "../api/client";
import type { components } from "../api/schema";
import { Await, PageTitle } from "../components/common";
import { formatMoment, plural } from "../format";
import { useLoad, useTitle } from "../hooks";
import { DailyGoal } from "../goal/DailyGoal";
import { keptDecks } from "../offline/keptStudy";
import type { Me } from "../session";

type S = components["schemas"];
type DeckDue = { deck: S["DeckOutput"]; due: number | null };

interface HomeData {
  courses: S["CourseOutput"][];
  decks: DeckDue[];
  quizzes: S["QuizOutput"][];
  exercises: S["ExerciseOutput"][];
}

const PAGE = 200;

async function loadHome(): Promise<HomeData> {
  const [courseList, deckList, quizList, exerciseList] = await Promise.all([
    call(client.GET("/api/v1/courses/", { params: { query: { page_size: PAGE } } })),
    call(client.GET("/api/v1/decks/", { params: { query: { page_size: PAGE } } })),
    call(client.GET("/api/v1/quizzes/", { params: { query: { page_size: PAGE } } })),
    call(client.GET("/api/v1/exercises/", { params: { query: { page_size: PAGE } } })),
  ]);
  const courses = await Promise.all(
    courseList.results.map((course) =>
      call(client.GET("/api/v1/courses/{slug}/", { params: { path: { slug: course.slug } } })),
    ),
  );
  // The study queue's counts are the only per-deck due figures; a failed count only hides the badge.
  const decks = await Promise.all(
    deckList.results.map(async (deck): Promise<DeckDue> => {
      try {
        const study = await call(client.GET("/api/v1/decks/{slug}/study/", { params: { path: { slug: deck.slug } } }));
        const c = study.counts;
        return { deck, due: c.learning_due + c.reviews_due + c.new_due };
      } catch {
        return { deck, due: null };
      }
    }),
  );
  return {
    courses,
    decks,
    quizzes: quizList.results,
    exercises: exerciseList.results,
  };
}

export function Home({ me }: { me: Me }) {
  useTitle("Home");
  const [value, retry] = useLoad(loadHome, []);
  const [goal] = useLoad(() => call(client.GET("/api/v1/srs/goal/")), []);
  const name = me.display_name || me.email || me.username;
  return (
    <>
      <PageTitle>Welcome, {name}</PageTitle>
      {goal.state === "ready" && <DailyGoal goal={goal.data} />}
      <Await value={value} retry={retry}>
        {(data) =>
          data.courses.length === 0 ? (
            <p>No courses are published yet.</p>
          ) : (
            data.courses.map((course) => <Course key={course.slug} course={course} data={data} />)
          )
        }
      </Await>
      {value.state === "error" && !value.notFound && <KeptDecks me={me} />}
    </>
  );
}

/** Without the server, the decks this device kept can still be studied. */
function KeptDecks({ me }: { me: Me }) {
  const kept = keptDecks(me.id);
  if (kept.length === 0) return null;
  return (
    <section class="card kept-decks" aria-labelledby="kept-decks-title">
      <h2 id="kept-decks-title">Kept on this device</h2>
      <p>These decks can be studied without a connection; your reviews are sent when it returns.</p>
      <ul class="link-list">
        {kept.map((entry) => {
          const left = entry.study.cards.length;
          return (
            <li key={entry.slug}>
              <a href={`/decks/${entry.slug}/study`}>{entry.title ?? entry.slug}</a>{" "}
              <span class="meta">
                {plural(left, "card", "cards")} kept {formatMoment(entry.keptAt)}
              </span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function Course({ course, data }: { course: S["CourseOutput"]; data: HomeData }) {
  const headingId = `course-${course.slug}`;
  const courseDecks = data.decks.filter((d) => d.deck.course === course.slug && !d.deck.lesson);
  return (
    <section class="course" aria-labelledby={headingId}>
      <h2 id={headingId}>{course.title}</h2>
      {course.description && <p class="lead">{course.description}</p>}
      <p>
        <a href={`/courses/${encodeURIComponent(course.slug)}/constellation`}>Concept constellation</a>
        {" · "}
        <a href={`/courses/${encodeURIComponent(course.slug)}/cards`}>Browse the cards</a>
        {course.scenes.map((scene) => (
          <span key={scene.slug}>
            {" · "}
            <a href={`/explorer/${encodeURIComponent(scene.slug)}`}>{scene.title}</a>
          </span>
        ))}
      </p>
      {course.lessons.map((lesson) => (
        <Lesson key={lesson.slug} lesson={lesson} data={data} />
      ))}
      {courseDecks.length > 0 && <DeckList decks={courseDecks} headingLevel={3} />}
    </section>
  );
}

function Lesson({ lesson, data }: { lesson: S["CourseOutput"]["lessons"][number]; data: HomeData }) {
  const decks = data.decks.filter((d) => d.deck.lesson === lesson.slug);
  const quizzes = data.quizzes.filter((q) => q.lesson === lesson.slug);
  const exercises = data.exercises.filter((e) => e.lesson === lesson.slug);
  const headingId = `lesson-${lesson.slug}`;
  return (
    <article class="card lesson-card" aria-labelledby={headingId}>
      <h3 id={headingId}>
        <a href={`/lessons/${encodeURIComponent(lesson.slug)}`}>{lesson.title}</a>
      </h3>
      {lesson.summary && <p>{lesson.summary}</p>}
      <div class="lesson-parts">
        {decks.length > 0 && <DeckList decks={decks} headingLevel={4} />}
        {quizzes.length > 0 && (
          <div>
            <h4>Quizzes</h4>
            <ul class="link-list">
              {quizzes.map((quiz) => (
                <li key={quiz.slug}>
                  <a href={`/quizzes/${encodeURIComponent(quiz.slug)}`}>{quiz.title}</a>{" "}
                  <span class="meta">
                    {plural(quiz.question_count, "question", "questions")}
                    {quiz.due_count > 0 && <>, {quiz.due_count} due</>}
                    {quiz.best_score !== null && <>, best {Math.round(quiz.best_score * 100)}%</>}
                  </span>
                </li>
              ))}
            </ul>
          </div>
        )}
        {exercises.length > 0 && (
          <div>
            <h4>Exercises</h4>
            <ul class="link-list">
              {exercises.map((exercise) => (
                <li key={exercise.slug}>
                  <a href={`/exercises/${encodeURIComponent(exercise.slug)}`}>{exercise.title}</a>
                </li>
              ))}
            </ul>
          </div>
        )}
      </div>
    </article>
  );
}

function DeckList({ decks, headingLevel }: { decks: DeckDue[]; headingLevel: 3 | 4 }) {
  const Heading = headingLevel === 3 ? "h3" : "h4";
  return (
    <div>
      <Heading>Memory decks</Heading>
      <ul class="link-list">
        {decks.map(({ deck, due }) => (
          <li key={deck.slug}>
            <a href={`/decks/${encodeURIComponent(deck.slug)}/study`}>Study {deck.title}</a>{" "}
            <span class="meta">
              {plural(deck.card_count, "card", "cards")}
              {due !== null && <>, {due} to study now</>}
            </span>{" "}
            <a class="secondary-link" href={`/decks/${encodeURIComponent(deck.slug)}/match`}>
              Match the pairs<span class="visually-hidden"> ({deck.title})</span>
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}

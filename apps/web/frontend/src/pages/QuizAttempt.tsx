/** The quiz-attempt page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function QuizAttempt({ id }: { id: string }) {
  useTitle("Quiz results");
  return (
    <section class="narrow">
      <PageTitle>Quiz results</PageTitle>
      <p>This page is coming soon. {id}</p>
    </section>
  );
}

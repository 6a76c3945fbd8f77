/** The quiz page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function Quiz({ slug }: { slug: string }) {
  useTitle("Quiz");
  return (
    <section class="narrow">
      <PageTitle>Quiz</PageTitle>
      <p>This page is coming soon. {slug}</p>
    </section>
  );
}

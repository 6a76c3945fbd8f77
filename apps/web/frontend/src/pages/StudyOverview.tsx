/** The study page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function StudyOverview() {
  useTitle("Study");
  return (
    <section class="narrow">
      <PageTitle>Study</PageTitle>
      <p>This page is coming soon. </p>
    </section>
  );
}

/** The progress page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function Progress() {
  useTitle("Progress");
  return (
    <section class="narrow">
      <PageTitle>Progress</PageTitle>
      <p>This page is coming soon. </p>
    </section>
  );
}

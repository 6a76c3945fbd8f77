/** The exercise page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function Exercise({ slug }: { slug: string }) {
  useTitle("Exercise");
  return (
    <section class="narrow">
      <PageTitle>Exercise</PageTitle>
      <p>This page is coming soon. {slug}</p>
    </section>
  );
}

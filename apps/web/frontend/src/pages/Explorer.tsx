/** The explorer page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function Explorer({ slug }: { slug: string }) {
  useTitle("Explorer");
  return (
    <section class="narrow">
      <PageTitle>Explorer</PageTitle>
      <p>This page is coming soon. {slug}</p>
    </section>
  );
}

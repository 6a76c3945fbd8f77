/** The constellation page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function Constellation({ slug }: { slug: string }) {
  useTitle("Concept constellation");
  return (
    <section class="narrow">
      <PageTitle>Concept constellation</PageTitle>
      <p>This page is coming soon. {slug}</p>
    </section>
  );
}

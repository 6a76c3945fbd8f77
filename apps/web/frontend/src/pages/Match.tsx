/** The deck-match page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function Match({ slug }: { slug: string }) {
  useTitle("Match the pairs");
  return (
    <section class="narrow">
      <PageTitle>Match the pairs</PageTitle>
      <p>This page is coming soon. {slug}</p>
    </section>
  );
}

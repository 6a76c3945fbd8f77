/** The settings page (loaded as its own chunk). */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export default function Settings() {
  useTitle("Settings");
  return (
    <section class="narrow">
      <PageTitle>Settings</PageTitle>
      <p>This page is coming soon. </p>
    </section>
  );
}

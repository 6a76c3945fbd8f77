/** Pages that only say something: a path that is no route, and the end of unsubscribing from reminders. */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export function NotFound({ path }: { path: string }) {
  useTitle("Page not found");
  return (
    <section class="narrow">
      <PageTitle>Page not found</PageTitle>
      <p>
        There is no page at <code>{path}</code>.
      </p>
      <p>
        <a href="/">Back to home</a>
      </p>
    </section>
  );
}

export function Unsubscribed() {
  useTitle("Unsubscribed");
  return (
    <section class="narrow">
      <PageTitle>You are unsubscribed</PageTitle>
      <p>You will not get these emails any more. You can turn them back on in Settings.</p>
      <p>
        <a href="/settings">Settings</a>
      </p>
    </section>
  );
}

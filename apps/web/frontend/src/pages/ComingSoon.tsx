/** Routes whose page is not built yet, and paths that are no route at all. */
import { PageTitle } from "../components/common";
import { useTitle } from "../hooks";

export function ComingSoon({ title, path }: { title: string; path: string }) {
  useTitle(title);
  return (
    <section class="narrow">
      <PageTitle>{title}</PageTitle>
      <p>
        This page (<code>{path}</code>) is coming soon.
      </p>
      <p>
        <a href="/">Back to home</a>
      </p>
    </section>
  );
}

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

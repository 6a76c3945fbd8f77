/** A section of the settings page: a card with its heading, which names the section for assistive technology. */
import type { ComponentChildren } from "preact";

export function Section({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="card settings-section" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </section>
  );
}

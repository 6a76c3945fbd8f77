/** Every deck with what is due in it now, the total first: where "Study now" in a reminder email lands. */
import { call, client } from "../api/client";
import { Await, PageTitle } from "../components/common";
import { plural } from "../format";
import { useLoad, useTitle } from "../hooks";
import { byDue, deckDue, dueHeadline, totalDue, type DeckDue } from "../progress/due";

const PAGE = 200;

async function loadDecks(): Promise<DeckDue[]> {
  const list = await call(client.GET("/api/v1/decks/", { params: { query: { page_size: PAGE } } }));
  // The study queue's counts are the per-deck due figures; one card is enough to get them.
  return Promise.all(
    list.results.map(async (deck): Promise<DeckDue> => {
      const base = { slug: deck.slug, title: deck.title, course: deck.course, cardCount: deck.card_count };
      try {
        const study = await call(
          client.GET("/api/v1/decks/{slug}/study/", { params: { path: { slug: deck.slug }, query: { limit: 1 } } }),
        );
        const c = study.counts;
        return { ...base, counts: { learning: c.learning_due, review: c.reviews_due, new: c.new_due } };
      } catch {
        return { ...base, counts: null };
      }
    }),
  );
}

export default function StudyOverview() {
  useTitle("Study");
  const [value, retry] = useLoad(loadDecks, []);
  return (
    <div class="study-overview">
      <PageTitle>Study</PageTitle>
      <Await value={value} retry={retry}>
        {(decks) => (
          <>
            <p class="due-total" role="status">
              {totalDue(decks) > 0 && <span class="due-total-number">{totalDue(decks)}</span>} {dueHeadline(decks)}
            </p>
            {decks.length > 0 && (
              <ul class="deck-due-list">
                {byDue(decks).map((deck) => (
                  <DeckRow key={deck.slug} deck={deck} />
                ))}
              </ul>
            )}
          </>
        )}
      </Await>
    </div>
  );
}

function DeckRow({ deck }: { deck: DeckDue }) {
  const slug = encodeURIComponent(deck.slug);
  const headingId = `deck-due-${deck.slug}`;
  const due = deckDue(deck);
  return (
    <li class={`card deck-due${due > 0 ? " has-due" : ""}`}>
      <h2 id={headingId}>{deck.title}</h2>
      {deck.counts === null ? (
        <p class="meta">{plural(deck.cardCount, "card", "cards")}; what is due could not be loaded.</p>
      ) : (
        <p class="counts" aria-label={`Due in ${deck.title}`}>
          <span class="count count-learning">
            <span class="count-number">{deck.counts.learning}</span> learning
          </span>
          <span class="count count-review">
            <span class="count-number">{deck.counts.review}</span> to review
          </span>
          <span class="count count-new">
            <span class="count-number">{deck.counts.new}</span> new
          </span>
        </p>
      )}
      <p class="deck-due-actions">
        <a class={`button${due > 0 ? " primary" : " secondary"}`} href={`/decks/${slug}/study`}>
          Study<span class="visually-hidden"> {deck.title}</span>
        </a>
        <a class="button secondary" href={`/decks/${slug}/match`}>
          Match<span class="visually-hidden"> {deck.title}</span>
        </a>
      </p>
    </li>
  );
}

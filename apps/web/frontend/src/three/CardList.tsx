/** The cards of a concept or region: each term with its definition, read from the card endpoint. */
import { call, client } from "../api/client";
import type { components } from "../api/schema";
import { Await } from "../components/common";
import { RichText } from "../components/RichText";
import { useLoad } from "../hooks";

type Card = components["schemas"]["CardOutput"];

const cache = new Map<number, Promise<Card>>();

function loadCard(id: number): Promise<Card> {
  let pending = cache.get(id);
  if (!pending) {
    pending = call(client.GET("/api/v1/cards/{card_id}/", { params: { path: { card_id: id } } }));
    // A failure is not kept: the next try asks again.
    pending.catch(() => cache.delete(id));
    cache.set(id, pending);
  }
  return pending;
}

export function CardList({ cards, heading = "h4" }: { cards: { id: number; term: string; deck: string }[]; heading?: "h3" | "h4" | "h5" }) {
  const ids = cards.map((card) => card.id);
  const [value, retry] = useLoad(() => Promise.all(ids.map(loadCard)), [ids.join(",")]);
  const Heading = heading;
  if (cards.length === 0) return <p class="meta">No cards for this yet.</p>;
  return (
    <Await value={value} retry={retry}>
      {(loaded) => (
        <ul class="three-cards">
          {loaded.map((card) => (
            <li key={card.id} class="three-card">
              <Heading>{card.term}</Heading>
              <RichText text={card.definition} format={card.format} />
              <p class="meta">
                <a href={`/decks/${encodeURIComponent(card.deck)}/study`}>Study its deck</a>
              </p>
            </li>
          ))}
        </ul>
      )}
    </Await>
  );
}

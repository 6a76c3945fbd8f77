/** One card: both sides, the learner's memory of it now and every review of it that stands. */
import { call, client } from "../api/client";
import type { components } from "../api/schema";
import { daysText, dueText, ratingName, recallText, stageLabel } from "../browse/logic";
import { Await, PageTitle } from "../components/common";
import { RichText } from "../components/RichText";
import { formatMoment } from "../format";
import { useLoad, useTitle } from "../hooks";

type History = components["schemas"]["CardHistoryOutput"];

const SOURCES: Record<string, string> = { deck: "Memory deck", match: "Match the Pairs", quiz: "Quiz" };

export default function CardHistory({ id }: { id: string }) {
  const cardId = Number(id);
  const [value, retry] = useLoad(
    () => call(client.GET("/api/v1/cards/{card_id}/history/", { params: { path: { card_id: cardId } } })),
    [cardId],
  );
  useTitle(value.state === "ready" ? value.data.card.term : "Card");
  return (
    <div class="card-history">
      {value.state !== "ready" && <PageTitle>Card</PageTitle>}
      <Await value={value} retry={retry}>
        {(data) => <Body data={data} />}
      </Await>
    </div>
  );
}

function Body({ data }: { data: History }) {
  const { card } = data;
  return (
    <>
      <p class="eyebrow">{data.deck_title}</p>
      <PageTitle>{card.term}</PageTitle>
      <section class="card flashcard" aria-label="The card">
        <RichText text={card.definition} format={card.format} />
        {card.example && (
          <div class="example">
            <RichText text={card.example} format={card.format} />
          </div>
        )}
        {card.code && (
          <pre>
            <code>{card.code}</code>
          </pre>
        )}
      </section>
      <section class="card" aria-labelledby="memory-title">
        <h2 id="memory-title">Your memory of it</h2>
        <dl class="facts">
          <dt>State</dt>
          <dd>{stageLabel(data.stage)}</dd>
          <dt>Next</dt>
          <dd>{dueText(data)}</dd>
          <dt>Chance of recall now</dt>
          <dd>{recallText(data.recall_probability)}</dd>
          <dt>Reviews</dt>
          <dd>{data.reviews}</dd>
          <dt>Lapses</dt>
          <dd>
            {data.lapses}
            {data.is_leech ? " (a leech)" : ""}
          </dd>
        </dl>
        {data.concepts.length > 0 && (
          <p>
            Teaches: {data.concepts.map((concept) => concept.name).join(", ")}.
          </p>
        )}
        <p>
          <a href={`/decks/${encodeURIComponent(data.deck)}/study`}>Study {data.deck_title}</a>
        </p>
      </section>
      <section class="card" aria-labelledby="history-title">
        <h2 id="history-title">Reviews</h2>
        {data.history.length === 0 ? (
          <p>Not studied yet: its reviews will be listed here.</p>
        ) : (
          <div class="table-scroll" tabIndex={0} role="region" aria-labelledby="history-title">
            <table class="history-table">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Rating</th>
                  <th scope="col">Before</th>
                  <th scope="col">Expected recall</th>
                  <th scope="col">Next in</th>
                  <th scope="col">Stability</th>
                  <th scope="col">Difficulty</th>
                </tr>
              </thead>
              <tbody>
                {data.history.map((review) => (
                  <tr key={review.id}>
                    <td>
                      {formatMoment(review.reviewed_at)}
                      {review.source !== "deck" && <span class="meta"> · {SOURCES[review.source] ?? review.source}</span>}
                    </td>
                    <td class={`rating-${ratingName(review.rating).toLowerCase()}`}>{ratingName(review.rating)}</td>
                    <td>{review.stage_before === null ? "—" : stageLabel(review.stage_before)}</td>
                    <td>{recallText(review.recall_before)}</td>
                    <td>{daysText(review.interval_days)}</td>
                    <td>{daysText(review.stability_days)}</td>
                    <td>{review.difficulty === null ? "—" : review.difficulty.toFixed(1)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

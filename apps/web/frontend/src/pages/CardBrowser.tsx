/** Every card of a course with the learner's memory of each: searched, filtered by state, concept and
 * deck, ordered, and opened for its history. The search lives in the address, so a reload keeps it. */
import { useEffect, useRef, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { describeError } from "../api/errors";
import {
  countText,
  dueText,
  EMPTY_SEARCH,
  ORDER_OPTIONS,
  recallLabel,
  recallText,
  searchFromQuery,
  searchParams,
  searchToQuery,
  stageLabel,
  STATE_OPTIONS,
  type BrowsedCard,
  type CardSearch,
} from "../browse/logic";
import { Await, ErrorMessage, Loading, PageTitle } from "../components/common";
import { useLoad, useTitle } from "../hooks";

const PAGE_SIZE = 50;

interface Facets {
  title: string;
  concepts: { slug: string; name: string }[];
  decks: { slug: string; title: string }[];
}

async function loadFacets(slug: string): Promise<Facets> {
  const path = { params: { path: { slug } } };
  const [course, graph, decks] = await Promise.all([
    call(client.GET("/api/v1/courses/{slug}/", path)),
    call(client.GET("/api/v1/courses/{slug}/concept-graph/", path)),
    call(client.GET("/api/v1/decks/", { params: { query: { page_size: 200 } } })),
  ]);
  return {
    title: course.title,
    concepts: graph.concepts.map(({ slug: concept, name }) => ({ slug: concept, name })),
    decks: decks.results.filter((deck) => deck.course === slug).map(({ slug: deck, title }) => ({ slug: deck, title })),
  };
}

export default function CardBrowser({ slug }: { slug: string }) {
  const [facets, retry] = useLoad(() => loadFacets(slug), [slug]);
  useTitle(facets.state === "ready" ? `Cards of ${facets.data.title}` : "Cards");
  return (
    <div class="card-browser">
      {facets.state !== "ready" && <PageTitle>Cards</PageTitle>}
      <Await value={facets} retry={retry}>
        {(data) => <Browser slug={slug} facets={data} />}
      </Await>
    </div>
  );
}

interface Results {
  search: CardSearch;
  items: BrowsedCard[];
  count: number;
  pages: number;
}

function Browser({ slug, facets }: { slug: string; facets: Facets }) {
  const [search, setSearch] = useState<CardSearch>(() => searchFromQuery(new URLSearchParams(location.search)));
  const [draft, setDraft] = useState(search.q);
  const [results, setResults] = useState<Results | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const asked = useRef(0);

  const fetchPage = async (wanted: CardSearch, page: number, before: BrowsedCard[]) => {
    const ticket = ++asked.current;
    setBusy(true);
    setError(null);
    try {
      const body = await call(
        client.GET("/api/v1/courses/{slug}/cards/", {
          params: { path: { slug }, query: searchParams(wanted, page, PAGE_SIZE) },
        }),
      );
      // A later search may have been asked for meanwhile: only its answer is shown.
      if (ticket !== asked.current) return;
      setResults({ search: wanted, items: [...before, ...body.results], count: body.count, pages: page });
    } catch (caught) {
      if (ticket === asked.current) setError(describeError(caught));
    } finally {
      if (ticket === asked.current) setBusy(false);
    }
  };

  useEffect(() => {
    history.replaceState(history.state, "", location.pathname + searchToQuery(search));
    void fetchPage(search, 1, []);
  }, [slug, search]);

  const change = (next: Partial<CardSearch>) => setSearch((current) => ({ ...current, ...next }));
  const searching = searchToQuery({ ...search, order: "course" }) !== "";
  const more = results !== null && results.items.length < results.count;

  return (
    <>
      <p class="eyebrow">{facets.title}</p>
      <PageTitle>Cards</PageTitle>
      <form
        class="card browse-filters"
        role="search"
        aria-label="Cards"
        onSubmit={(event) => {
          event.preventDefault();
          change({ q: draft });
        }}
      >
        <div class="field browse-text">
          <label for="browse-q">Search the cards</label>
          <div class="browse-text-row">
            <input
              id="browse-q"
              type="search"
              value={draft}
              maxLength={200}
              placeholder="Words in a term, definition, example, code or tag"
              onInput={(event) => setDraft(event.currentTarget.value)}
            />
            <button type="submit" class="button primary">
              Search
            </button>
          </div>
        </div>
        <div class="browse-selects">
          <Choice
            id="browse-state"
            label="State"
            value={search.state}
            options={STATE_OPTIONS}
            onChange={(value) => change({ state: value as CardSearch["state"] })}
          />
          <Choice
            id="browse-concept"
            label="Concept"
            value={search.concept}
            options={[{ value: "", label: "Any concept" }, ...facets.concepts.map((c) => ({ value: c.slug, label: c.name }))]}
            onChange={(value) => change({ concept: value })}
          />
          <Choice
            id="browse-deck"
            label="Deck"
            value={search.deck}
            options={[{ value: "", label: "Any deck" }, ...facets.decks.map((d) => ({ value: d.slug, label: d.title }))]}
            onChange={(value) => change({ deck: value })}
          />
          <Choice
            id="browse-order"
            label="Order"
            value={search.order}
            options={ORDER_OPTIONS}
            onChange={(value) => change({ order: value as CardSearch["order"] })}
          />
        </div>
        {searching && (
          <button
            type="button"
            class="button link-button"
            onClick={() => {
              setDraft("");
              setSearch(EMPTY_SEARCH);
            }}
          >
            Clear the search
          </button>
        )}
      </form>
      <p class="browse-count" role="status" aria-live="polite">
        {results === null ? "" : countText(results.count, searchToQuery({ ...results.search, order: "course" }) !== "")}
      </p>
      {error !== null && <ErrorMessage message={error} onRetry={() => void fetchPage(search, 1, [])} />}
      {results === null && busy && <Loading label="Finding the cards…" />}
      {results !== null && results.count === 0 && (
        <p>{searching ? "No card matches this search." : "This course has no cards yet."}</p>
      )}
      {results !== null && results.items.length > 0 && (
        <ol class="browse-list">
          {results.items.map((item) => (
            <BrowsedItem key={item.card.id} item={item} />
          ))}
        </ol>
      )}
      {more && (
        <p>
          <button
            type="button"
            class="button secondary"
            disabled={busy}
            onClick={() => results && void fetchPage(results.search, results.pages + 1, results.items)}
          >
            {busy ? "Loading…" : `Show ${Math.min(PAGE_SIZE, results.count - results.items.length)} more`}
          </button>
        </p>
      )}
    </>
  );
}

function Choice({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (value: string) => void;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

function BrowsedItem({ item }: { item: BrowsedCard }) {
  return (
    <li class="card browse-item">
      <h2 class="browse-term">
        <a href={`/cards/${item.card.id}`}>{item.card.term}</a>
      </h2>
      <p class="meta">
        <span>{item.deck_title}</span>
        <span class={`stage stage-${item.stage}`}>{stageLabel(item.stage)}</span>
        <span>{dueText(item)}</span>
        <span aria-label={recallLabel(item.recall_probability)}>
          Recall <strong>{recallText(item.recall_probability)}</strong>
        </span>
        {item.lapses > 0 && <span>{item.lapses === 1 ? "1 lapse" : `${item.lapses} lapses`}</span>}
        {item.is_leech && <span class="badge badge-leech">Leech</span>}
      </p>
    </li>
  );
}

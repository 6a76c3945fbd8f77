/** A course's concepts in 3D, coloured by mastery, with a list view that says the same in words. */
import { useState } from "preact/hooks";
import { call, client } from "../api/client";
import { Await, Notice, PageTitle } from "../components/common";
import { RichText } from "../components/RichText";
import { useLoad, useTitle } from "../hooks";
import { CardList } from "../three/CardList";
import { mountConstellation, type Constellation, type ConstellationNode } from "../three/constellation";
import {
  BANDS,
  formatMastery,
  hasWebgl2,
  initialView,
  LINK_KINDS,
  masteryBand,
  prefersReducedMotion,
  type LinkKind,
  type ViewMode,
} from "../three/pure";
import { ThreeStage } from "../three/Stage";

interface Loaded {
  constellation: Constellation;
  courseTitle: string;
  scenes: { slug: string; title: string }[];
}

async function load(slug: string): Promise<Loaded> {
  const path = { params: { path: { slug } } };
  const [constellation, course, scenes] = await Promise.all([
    call(client.GET("/api/v1/courses/{slug}/constellation/", path)),
    // The title and the scenes only decorate the page: without them it still works.
    call(client.GET("/api/v1/courses/{slug}/", path)).catch(() => null),
    call(client.GET("/api/v1/explorer/", { params: { query: { page_size: 200 } } })).catch(() => null),
  ]);
  return {
    constellation,
    courseTitle: course?.title ?? "",
    scenes: (scenes?.results ?? []).filter((scene) => scene.course === slug),
  };
}

export default function ConstellationPage({ slug }: { slug: string }) {
  const [value, retry] = useLoad(() => load(slug), [slug]);
  useTitle(value.state === "ready" && value.data.courseTitle ? `Concepts of ${value.data.courseTitle}` : "Concept constellation");
  return (
    <div class="constellation">
      {value.state !== "ready" && <PageTitle>Concept constellation</PageTitle>}
      <Await value={value} retry={retry}>
        {(data) => <Body data={data} />}
      </Await>
    </div>
  );
}

function Body({ data }: { data: Loaded }) {
  const { constellation } = data;
  const [webgl, setWebgl] = useState(hasWebgl2);
  const [view, setView] = useState<ViewMode>(() => initialView(webgl, prefersReducedMotion()));
  const [selected, setSelected] = useState<string | null>(null);
  const nodes = constellation.nodes;
  const node = nodes.find((item) => item.slug === selected) ?? null;
  const sorted = [...nodes].sort((a, b) => a.name.localeCompare(b.name));

  return (
    <>
      {data.courseTitle && <p class="eyebrow">{data.courseTitle}</p>}
      <PageTitle>Concept constellation</PageTitle>
      <p class="lead">
        Each point is a concept, coloured by how well you remember its cards; lines link related concepts.
      </p>
      {nodes.length === 0 ? (
        <Notice>
          <p>This course has no concepts yet.</p>
        </Notice>
      ) : (
        <>
          <div class="three-toolbar">
            <button
              type="button"
              class="button secondary"
              aria-pressed={view === "list"}
              disabled={!webgl}
              onClick={() => setView(view === "list" ? "3d" : "list")}
            >
              {view === "list" ? "Show in 3D" : "Show as list"}
            </button>
            {!webgl && <p class="meta">The 3D view needs WebGL, which this browser does not offer; the list shows the same.</p>}
          </div>
          <Legend />
          {view === "3d" ? (
            <div class="three-layout">
              <div class="three-stage">
                <ThreeStage
                  source={constellation}
                  mount={mountConstellation}
                  selected={selected}
                  onPick={setSelected}
                  onFail={() => {
                    setWebgl(false);
                    setView("list");
                    return null;
                  }}
                  label="Concept constellation. Choose a concept from the list under it."
                  describedBy="constellation-keys"
                />
                <p class="meta" id="constellation-keys">
                  Drag or press the arrow keys to rotate, scroll or press + and − to zoom, 0 to reset the view.
                </p>
                <div class="field three-picker">
                  <label for="concept-picker">Concept</label>
                  <select
                    id="concept-picker"
                    value={selected ?? ""}
                    onChange={(event) => setSelected((event.currentTarget as HTMLSelectElement).value || null)}
                  >
                    <option value="">Choose a concept…</option>
                    {sorted.map((item) => (
                      <option key={item.slug} value={item.slug}>
                        {item.name}
                      </option>
                    ))}
                  </select>
                </div>
              </div>
              <aside class="three-panel card" aria-labelledby="concept-panel-title">
                {node ? (
                  <ConceptDetails node={node} titleId="concept-panel-title" onSelect={setSelected} />
                ) : (
                  <p id="concept-panel-title">Select a concept to see its definition, its links and its cards.</p>
                )}
              </aside>
            </div>
          ) : (
            <ConceptList nodes={sorted} selected={selected} onSelect={setSelected} />
          )}
        </>
      )}
      <p class="visually-hidden" aria-live="polite">
        {node ? `Selected: ${node.name}.` : ""}
      </p>
      {data.scenes.length > 0 && (
        <section aria-labelledby="scenes-title">
          <h2 id="scenes-title">Explore in 3D</h2>
          <ul class="link-list">
            {data.scenes.map((scene) => (
              <li key={scene.slug}>
                <a href={`/explorer/${encodeURIComponent(scene.slug)}`}>{scene.title}</a>
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}

function Legend() {
  return (
    <div class="three-legend">
      <section aria-labelledby="legend-mastery">
        <h2 id="legend-mastery" class="three-legend-title">
          Mastery
        </h2>
        <ul>
          {BANDS.map((band) => (
            <li key={band.key}>
              <span class={`three-swatch band-${band.key}`} aria-hidden="true" />
              {band.label}
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="legend-links">
        <h2 id="legend-links" class="three-legend-title">
          Links
        </h2>
        <ul>
          {(Object.keys(LINK_KINDS) as LinkKind[]).map((kind) => (
            <li key={kind}>
              <span class={`three-line kind-${kind}`} aria-hidden="true" />
              {LINK_KINDS[kind].label}
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}

function ConceptDetails({
  node,
  titleId,
  onSelect,
  inline = false,
}: {
  node: ConstellationNode;
  titleId: string;
  onSelect: (slug: string) => void;
  /** Inside the list, whose item already names the concept and its mastery. */
  inline?: boolean;
}) {
  const Sub = inline ? "h4" : "h3";
  return (
    <div class="concept-details" data-concept={node.slug}>
      {!inline && (
        <>
          <h2 id={titleId}>{node.name}</h2>
          <p class="meta">
            <span class={`three-swatch band-${masteryBand(node.mastery, node.cards_studied).key}`} aria-hidden="true" />
            {formatMastery(node.mastery, node.cards_studied, node.cards_total)}
          </p>
        </>
      )}
      <div class="concept-definition">
        <RichText text={node.definition} />
      </div>
      {node.links.length > 0 && (
        <>
          <Sub>Links</Sub>
          <ul class="concept-links">
            {node.links.map((link) => (
              <li key={`${link.direction}-${link.kind}-${link.concept}`}>
                <span class={`three-line kind-${link.kind}`} aria-hidden="true" />
                {link.label} {link.concept_name}{" "}
                <button
                  type="button"
                  class="button link-button"
                  aria-label={`Show ${link.concept_name}`}
                  onClick={() => onSelect(link.concept)}
                >
                  Show
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
      <Sub>Cards</Sub>
      <CardList cards={node.cards} heading={inline ? "h5" : "h4"} />
    </div>
  );
}

function ConceptList({
  nodes,
  selected,
  onSelect,
}: {
  nodes: ConstellationNode[];
  selected: string | null;
  onSelect: (slug: string | null) => void;
}) {
  return (
    <section aria-labelledby="concept-list-title" class="concept-list-view">
      <h2 id="concept-list-title">Concepts</h2>
      <ul class="concept-list">
        {nodes.map((node) => {
          const open = node.slug === selected;
          return (
            <li key={node.slug} class={`concept-item card${open ? " is-open" : ""}`} data-concept={node.slug}>
              <h3 class="concept-name">
                <button
                  type="button"
                  class="concept-toggle"
                  aria-expanded={open}
                  aria-controls={`concept-${node.slug}`}
                  onClick={() => onSelect(open ? null : node.slug)}
                >
                  <span class={`three-swatch band-${masteryBand(node.mastery, node.cards_studied).key}`} aria-hidden="true" />
                  {node.name}
                </button>
              </h3>
              <p class="meta">{formatMastery(node.mastery, node.cards_studied, node.cards_total)}</p>
              {!open && (node.links.length > 0 || node.cards.length > 0) && (
                <p class="meta concept-summary">
                  {node.links.length > 0 && `Links: ${node.links.map((link) => `${link.label} ${link.concept_name}`).join("; ")}.`}
                  {node.links.length > 0 && node.cards.length > 0 && " "}
                  {node.cards.length > 0 && `Cards: ${node.cards.map((card) => card.term).join(", ")}.`}
                </p>
              )}
              <div id={`concept-${node.slug}`} hidden={!open}>
                {open && <ConceptDetails node={node} titleId={`concept-title-${node.slug}`} onSelect={onSelect} inline />}
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** An explorer scene: its 3D model with clickable regions, the same regions as a list, and each one's cards. */
import { useState } from "preact/hooks";
import { call, client } from "../api/client";
import { describeError } from "../api/errors";
import type { components } from "../api/schema";
import { Await, ErrorMessage, Notice, PageTitle } from "../components/common";
import { RichText } from "../components/RichText";
import { useLoad, useTitle } from "../hooks";
import { CardList } from "../three/CardList";
import { hasWebgl2, newVisitId } from "../three/pure";
import { type StageView, ThreeStage } from "../three/Stage";
import type { ProbedElement } from "../three/viewer";

type Scene = components["schemas"]["SceneOutput"];
type Region = components["schemas"]["RegionOutput"];

export default function Explorer({ slug }: { slug: string }) {
  const [value, retry] = useLoad(
    () => call(client.GET("/api/v1/explorer/{slug}/", { params: { path: { slug } } })),
    [slug],
  );
  useTitle(value.state === "ready" ? value.data.title : "Explorer");
  return (
    <div class="explorer">
      {value.state !== "ready" && <PageTitle>Explorer</PageTitle>}
      <Await value={value} retry={retry}>
        {(scene) => <Body scene={scene} />}
      </Await>
    </div>
  );
}

function Body({ scene }: { scene: Scene }) {
  const [regions, setRegions] = useState<Region[]>(scene.regions);
  const [selected, setSelected] = useState<string | null>(null);
  const [visitError, setVisitError] = useState<{ slug: string; message: string } | null>(null);
  const [webgl] = useState(hasWebgl2);
  const region = regions.find((item) => item.slug === selected) ?? null;

  async function recordVisit(slug: string) {
    setVisitError(null);
    try {
      const visit = await call(
        client.POST("/api/v1/explorer/{slug}/regions/{region_slug}/visits/", {
          params: { path: { slug: scene.slug, region_slug: slug } },
          body: { client_visit_id: newVisitId() },
        }),
      );
      setRegions((list) =>
        list.map((item) =>
          item.slug === slug ? { ...item, visited: true, last_visited_at: item.last_visited_at ?? visit.visited_at } : item,
        ),
      );
    } catch (error) {
      setVisitError({ slug, message: `Your visit was not saved. ${describeError(error)}` });
    }
  }

  function choose(slug: string) {
    if (slug === selected) return;
    setSelected(slug);
    void recordVisit(slug);
  }

  const visited = regions.filter((item) => item.visited).length;
  return (
    <>
      <p class="eyebrow">Explorer</p>
      <PageTitle>{scene.title}</PageTitle>
      {scene.instructions && <p class="lead">{scene.instructions}</p>}
      <div class="three-layout">
        <div class="three-stage">
          {webgl ? (
            <>
              <ThreeStage
                source={scene}
                mount={mountScene}
                selected={selected}
                onPick={choose}
                onFail={modelError}
                label={`${scene.title} model. Choose a region from the list under it.`}
                describedBy="explorer-keys"
                loadingLabel="Loading the 3D model…"
              />
              <p class="meta" id="explorer-keys">
                Drag or press the arrow keys to rotate, scroll or press + and − to zoom, 0 to reset the view.
              </p>
            </>
          ) : (
            <Notice>
              <p>The 3D model needs WebGL, which this browser does not offer. Every region is in the list.</p>
            </Notice>
          )}
          <section aria-labelledby="regions-title" class="region-list-view">
            <h2 id="regions-title">Regions</h2>
            <p class="meta">
              {visited} of {regions.length} visited
            </p>
            <ul class="region-list">
              {regions.map((item) => (
                <li key={item.slug}>
                  <button
                    type="button"
                    class="button region-button"
                    aria-pressed={item.slug === selected}
                    data-region={item.slug}
                    onClick={() => choose(item.slug)}
                  >
                    <span>{item.title}</span>
                    {item.visited && <span class="region-visited">Visited</span>}
                  </button>
                </li>
              ))}
            </ul>
          </section>
        </div>
        <aside class="three-panel card" aria-labelledby="region-panel-title">
          {region ? (
            <div class="region-details" data-region={region.slug}>
              <h2 id="region-panel-title">{region.title}</h2>
              {visitError && visitError.slug === region.slug && (
                <ErrorMessage message={visitError.message} onRetry={() => void recordVisit(region.slug)} />
              )}
              <RichText text={region.description} />
              <h3>Cards</h3>
              <CardList cards={region.cards} heading="h4" />
            </div>
          ) : (
            <p id="region-panel-title">Select a region in the model or in the list to see what happens there.</p>
          )}
        </aside>
      </div>
      <p class="visually-hidden" aria-live="polite">
        {region ? `Selected: ${region.title}.` : ""}
      </p>
    </>
  );
}

function mountScene(host: ProbedElement, scene: Scene, onPick: (slug: string) => void): Promise<StageView> {
  // The explorer's loader is a chunk of its own: only this page needs glTF.
  return import("../three/explorer").then(({ mountExplorer }) =>
    mountExplorer(host, scene.model_url, scene.regions, onPick),
  );
}

function modelError(error: unknown): string {
  const base = "The 3D model could not be loaded; every region is in the list below.";
  return error instanceof Error && /network|fetch|404|load/i.test(error.message)
    ? `${base} Check your connection and reload the page to try again.`
    : base;
}

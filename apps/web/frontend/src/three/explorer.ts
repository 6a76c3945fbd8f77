/** The explorer scene: its glTF model, one named object per region, highlighted on hover and selection. */
import { Box3, Mesh, MeshStandardMaterial, Vector3, type Object3D } from "three";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";
import { CSS2DObject } from "three/examples/jsm/renderers/CSS2DRenderer.js";
import { Viewer, type ProbedElement } from "./viewer";

export interface ExplorerView {
  select(slug: string | null): void;
  dispose(): void;
}

const HOVER_GLOW = 0x2a2a2a;
const SELECTED_GLOW = 0x555555;

/** The region an object belongs to: the nearest of itself and its ancestors named by a region's slug. */
export function regionOf(object: Object3D | null, regions: ReadonlySet<string>): string | null {
  for (let at = object; at !== null; at = at.parent) {
    if (regions.has(at.name)) return at.name;
  }
  return null;
}

export async function mountExplorer(
  host: ProbedElement,
  modelUrl: string,
  regions: { slug: string; title: string }[],
  onPick: (slug: string) => void,
): Promise<ExplorerView> {
  const gltf = await new GLTFLoader().loadAsync(modelUrl);
  const slugs = new Set(regions.map((region) => region.slug));
  const meshes = new Map<string, MeshStandardMaterial[]>();
  const labels = new Map<string, HTMLElement>();
  let hovered: string | null = null;
  let selected: string | null = null;

  const viewer = new Viewer(host, {
    pickables: () => [gltf.scene],
    resolve: (hit) => regionOf(hit, slugs),
    onPick,
    onHover: (slug) => {
      hovered = slug;
      paint();
    },
  });

  gltf.scene.traverse((object) => {
    const slug = regionOf(object, slugs);
    if (slug === null || !(object instanceof Mesh)) return;
    // Each region lights up alone, so it needs its own copy of a material the file may share.
    const material = (object.material as MeshStandardMaterial).clone();
    object.material = material;
    meshes.set(slug, [...(meshes.get(slug) ?? []), material]);
  });
  viewer.scene.add(gltf.scene);

  for (const region of regions) {
    const object = gltf.scene.getObjectByName(region.slug);
    if (!object) continue;
    viewer.register(region.slug, object);
    const element = document.createElement("div");
    element.className = "three-label";
    element.textContent = region.title;
    const tag = new CSS2DObject(element);
    const box = new Box3().setFromObject(object);
    tag.position.set(0, box.max.y - object.getWorldPosition(new Vector3()).y + 0.15, 0);
    object.add(tag);
    labels.set(region.slug, element);
  }

  function paint(): void {
    for (const [slug, materials] of meshes) {
      const glow = slug === selected ? SELECTED_GLOW : slug === hovered ? HOVER_GLOW : 0x000000;
      for (const material of materials) material.emissive.setHex(glow);
      labels.get(slug)?.classList.toggle("is-selected", slug === selected);
      labels.get(slug)?.classList.toggle("is-hovered", slug === hovered);
    }
    host.dataset.hovered = hovered ?? "";
    viewer.requestRender();
  }

  // The stages stand in a row: framing their row, rather than the sphere round it, shows them larger;
  // seen from a front corner the row runs across the view's height too, and its names stand apart.
  const box = new Box3().setFromObject(gltf.scene);
  const half = box.getSize(new Vector3()).multiplyScalar(0.5);
  viewer.frameBox(box.getCenter(new Vector3()), half, new Vector3(1.2, 1.1, 1.6));
  host.dataset.regions = String(meshes.size);
  host.dataset.ready = "true";

  return {
    select(slug) {
      selected = slug;
      host.dataset.selected = slug ?? "";
      paint();
    },
    dispose() {
      for (const element of labels.values()) element.remove();
      viewer.dispose();
      delete host.dataset.ready;
    },
  };
}

/** The constellation's objects: a sphere per concept coloured by mastery, a line per link coloured by kind. */
import {
  BufferGeometry,
  Float32BufferAttribute,
  Group,
  LineBasicMaterial,
  LineSegments,
  Mesh,
  MeshStandardMaterial,
  SphereGeometry,
  Vector3,
  type Object3D,
} from "three";
import { CSS2DObject } from "three/examples/jsm/renderers/CSS2DRenderer.js";
import type { components } from "../api/schema";
import { LINK_KINDS, linkKindLabel, masteryBand, type LinkKind } from "./pure";
import { Viewer, type ProbedElement } from "./viewer";

export type Constellation = components["schemas"]["ConstellationOutput"];
export type ConstellationNode = components["schemas"]["NodeOutput"];

const NODE_RADIUS = 0.055;
const SELECTED_SCALE = 1.7;

export interface ConstellationView {
  select(slug: string | null): void;
  dispose(): void;
}

function label(text: string, className: string): CSS2DObject {
  const element = document.createElement("div");
  element.className = className;
  element.textContent = text;
  return new CSS2DObject(element);
}

export function mountConstellation(
  host: ProbedElement,
  data: Constellation,
  onPick: (slug: string) => void,
): ConstellationView {
  const nodes = new Map<string, Mesh>();
  const nodeLabels = new Map<string, CSS2DObject>();
  const viewer = new Viewer(host, {
    pickables: () => [...nodes.values()],
    resolve: (hit: Object3D) => (typeof hit.userData.slug === "string" ? hit.userData.slug : null),
    onPick,
    onHover: (slug) => {
      for (const [key, item] of nodeLabels) item.element.classList.toggle("is-hovered", key === slug);
      viewer.requestRender();
    },
  });

  const sphere = new SphereGeometry(NODE_RADIUS, 20, 14);
  const position = new Map<string, Vector3>();
  for (const node of data.nodes) {
    const band = masteryBand(node.mastery, node.cards_studied);
    const mesh = new Mesh(sphere, new MeshStandardMaterial({ color: band.colour, roughness: 0.5 }));
    mesh.position.set(node.x, node.y, node.z);
    mesh.userData.slug = node.slug;
    const name = label(node.name, "three-label");
    name.position.set(0, NODE_RADIUS * 1.8, 0);
    mesh.add(name);
    viewer.scene.add(mesh);
    viewer.register(node.slug, mesh);
    nodes.set(node.slug, mesh);
    nodeLabels.set(node.slug, name);
    position.set(node.slug, mesh.position);
  }

  const edges = data.edges.filter((edge) => position.has(edge.source) && position.has(edge.target));
  const points: number[] = [];
  const colours: number[] = [];
  for (const edge of edges) {
    const colour = LINK_KINDS[edge.kind as LinkKind]?.colour ?? 0x6b7280;
    const rgb = [((colour >> 16) & 255) / 255, ((colour >> 8) & 255) / 255, (colour & 255) / 255];
    for (const end of [edge.source, edge.target]) {
      const at = position.get(end) as Vector3;
      points.push(at.x, at.y, at.z);
      colours.push(...rgb);
    }
  }
  const lineGeometry = new BufferGeometry();
  lineGeometry.setAttribute("position", new Float32BufferAttribute(points, 3));
  lineGeometry.setAttribute("color", new Float32BufferAttribute(colours, 3));
  viewer.scene.add(new LineSegments(lineGeometry, new LineBasicMaterial({ vertexColors: true })));

  // Link names are drawn for the selected concept's links only: all of them at once cannot be read.
  const linkLabels = new Group();
  viewer.scene.add(linkLabels);

  host.dataset.nodes = String(nodes.size);
  host.dataset.links = String(edges.length);
  const centre = new Vector3();
  for (const at of position.values()) centre.add(at);
  centre.divideScalar(Math.max(1, position.size));
  let radius = NODE_RADIUS;
  for (const at of position.values()) radius = Math.max(radius, at.distanceTo(centre));
  // Seen from any side, the concepts cover far less than their bounding sphere: framing about two
  // thirds of it fills the view, and zooming out shows any that fall outside after a turn.
  viewer.frameSphere(centre, radius * 0.65 + NODE_RADIUS, new Vector3(0.35, 0.3, 1));
  host.dataset.ready = "true";

  return {
    select(slug) {
      for (const [key, mesh] of nodes) {
        const selected = key === slug;
        mesh.scale.setScalar(selected ? SELECTED_SCALE : 1);
        (mesh.material as MeshStandardMaterial).emissive.setHex(selected ? 0x333333 : 0x000000);
        nodeLabels.get(key)?.element.classList.toggle("is-selected", selected);
      }
      for (const child of [...linkLabels.children]) {
        linkLabels.remove(child);
        (child as CSS2DObject).element.remove();
      }
      if (slug !== null) {
        for (const edge of edges) {
          if (edge.source !== slug && edge.target !== slug) continue;
          const from = position.get(edge.source) as Vector3;
          const to = position.get(edge.target) as Vector3;
          const tag = label(edge.label || linkKindLabel(edge.kind), "three-label three-link-label");
          tag.position.copy(from).add(to).multiplyScalar(0.5);
          linkLabels.add(tag);
        }
      }
      host.dataset.selected = slug ?? "";
      viewer.requestRender();
    },
    dispose() {
      for (const child of linkLabels.children) (child as CSS2DObject).element.remove();
      for (const item of nodeLabels.values()) item.element.remove();
      viewer.dispose();
      delete host.dataset.ready;
    },
  };
}

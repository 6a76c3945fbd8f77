/** The 3D pages' logic that needs no WebGL: mastery bands, link kinds, keyboard steps, view choice. */

export type LinkKind = "prerequisite" | "part_of" | "enables" | "related" | "contrasts" | "prevents";

export interface Band {
  key: "unstudied" | "low" | "mid" | "high";
  label: string;
  /** Node colour in the scene, as 0xRRGGBB. */
  colour: number;
}

/** Four bands rather than a gradient, so the legend can name every colour the scene uses. */
export const BANDS: readonly Band[] = [
  { key: "unstudied", label: "Not studied yet", colour: 0x8a8f99 },
  { key: "low", label: "Weak (under 40%)", colour: 0xd1433a },
  { key: "mid", label: "Getting there (40–70%)", colour: 0xe0a020 },
  { key: "high", label: "Strong (70% or more)", colour: 0x2e9e50 },
];

export function masteryBand(mastery: number, cardsStudied: number): Band {
  const [unstudied, low, mid, high] = BANDS as [Band, Band, Band, Band];
  if (cardsStudied <= 0) return unstudied;
  if (mastery < 0.4) return low;
  if (mastery < 0.7) return mid;
  return high;
}

export function formatMastery(mastery: number, cardsStudied: number, cardsTotal: number): string {
  if (cardsTotal === 0) return "No cards yet";
  const percent = Math.round(Math.max(0, Math.min(1, mastery)) * 100);
  return `${percent}% mastery · ${cardsStudied} of ${cardsTotal} cards studied`;
}

export const LINK_KINDS: Readonly<Record<LinkKind, { label: string; colour: number }>> = {
  prerequisite: { label: "is a prerequisite of", colour: 0x3b6fd6 },
  part_of: { label: "is part of", colour: 0x6b7280 },
  enables: { label: "enables", colour: 0x0f9488 },
  related: { label: "is related to", colour: 0x9b59b6 },
  contrasts: { label: "contrasts with", colour: 0xc2410c },
  prevents: { label: "prevents", colour: 0xbe185d },
};

export function linkKindLabel(kind: string): string {
  return (LINK_KINDS as Record<string, { label: string } | undefined>)[kind]?.label ?? kind.replace(/_/g, " ");
}

export function cssColour(colour: number): string {
  return `#${colour.toString(16).padStart(6, "0")}`;
}

export type ViewMode = "3d" | "list";

/** The 3D view only where it can run and the learner has not asked for less motion. */
export function initialView(webgl: boolean, reducedMotion: boolean): ViewMode {
  return webgl && !reducedMotion ? "3d" : "list";
}

export type ViewerKeyAction =
  | { kind: "rotate"; left: number; up: number }
  | { kind: "zoom"; scale: number }
  | { kind: "reset" };

/** A quarter of a right angle per key press: small enough to follow, big enough to get round quickly. */
export const ROTATE_STEP = Math.PI / 16;
export const ZOOM_STEP = 1.2;

/** What a key does to the 3D view, or null when the key is not the viewer's. */
export function viewerKeyAction(key: string): ViewerKeyAction | null {
  switch (key) {
    case "ArrowLeft":
      return { kind: "rotate", left: ROTATE_STEP, up: 0 };
    case "ArrowRight":
      return { kind: "rotate", left: -ROTATE_STEP, up: 0 };
    case "ArrowUp":
      return { kind: "rotate", left: 0, up: ROTATE_STEP };
    case "ArrowDown":
      return { kind: "rotate", left: 0, up: -ROTATE_STEP };
    case "+":
    case "=":
      return { kind: "zoom", scale: ZOOM_STEP };
    case "-":
    case "_":
      return { kind: "zoom", scale: 1 / ZOOM_STEP };
    case "0":
    case "Home":
      return { kind: "reset" };
  }
  return null;
}

/** A pointer press that moved less than this many pixels is a click, not a drag to rotate. */
export const CLICK_SLOP_PX = 5;

export function isClick(down: { x: number; y: number }, up: { x: number; y: number }): boolean {
  return Math.hypot(up.x - down.x, up.y - down.y) <= CLICK_SLOP_PX;
}

/** Pointer position in normalised device coordinates (-1..1, y up), as the raycaster takes it. */
export function toNdc(
  clientX: number,
  clientY: number,
  rect: { left: number; top: number; width: number; height: number },
): { x: number; y: number } {
  return {
    x: ((clientX - rect.left) / rect.width) * 2 - 1,
    y: -((clientY - rect.top) / rect.height) * 2 + 1,
  };
}

/** The reverse: a point in normalised device coordinates to pixels within the element. */
export function fromNdc(x: number, y: number, size: { width: number; height: number }): { x: number; y: number } {
  return { x: ((x + 1) / 2) * size.width, y: ((1 - y) / 2) * size.height };
}

/** How far a camera with this vertical field of view must stand to see a sphere of this radius whole. */
export function fitDistance(radius: number, fovDegrees: number, aspect: number): number {
  const vertical = (fovDegrees * Math.PI) / 180;
  const horizontal = 2 * Math.atan(Math.tan(vertical / 2) * aspect);
  return radius / Math.sin(Math.min(vertical, horizontal) / 2);
}

/** How far back a camera must stand to see a box of these half sizes whole, facing one of its sides. */
export function fitBoxDistance(
  half: { x: number; y: number; z: number },
  fovDegrees: number,
  aspect: number,
): number {
  const vertical = (fovDegrees * Math.PI) / 180;
  const horizontal = 2 * Math.atan(Math.tan(vertical / 2) * aspect);
  return Math.max(half.x / Math.tan(horizontal / 2), half.y / Math.tan(vertical / 2)) + half.z;
}

/** Visit ids that make a retried POST harmless; randomUUID is missing outside secure contexts. */
export function newVisitId(random: (bytes: Uint8Array) => void = (bytes) => crypto.getRandomValues(bytes)): string {
  const bytes = new Uint8Array(16);
  random(bytes);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function hasWebgl2(doc: Document = document): boolean {
  try {
    const gl = doc.createElement("canvas").getContext("webgl2");
    // Browsers keep only a few contexts alive at once: the probe's must not push out the page's own.
    gl?.getExtension("WEBGL_lose_context")?.loseContext();
    return gl !== null;
  } catch {
    return false;
  }
}

export function prefersReducedMotion(): boolean {
  return typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

export interface PlacedLabel {
  key: number;
  left: number;
  top: number;
  right: number;
  bottom: number;
  /** Lower goes first: what is chosen or pointed at, then what is nearer the camera. */
  rank: number;
}

/**
 * Which labels to show: each in rank order, unless it would overlap one already shown (with `gap`
 * pixels between) or run past the scene's edge, where it would be cut off. A label hidden here is
 * still named on hover and in the list view.
 */
export function labelsShown(
  labels: PlacedLabel[],
  bounds: { left: number; top: number; right: number; bottom: number },
  gap = 2,
): Set<number> {
  const shown: PlacedLabel[] = [];
  for (const label of [...labels].sort((a, b) => a.rank - b.rank)) {
    if (label.right <= label.left || label.bottom <= label.top) continue;
    const inside =
      label.left >= bounds.left && label.right <= bounds.right && label.top >= bounds.top && label.bottom <= bounds.bottom;
    const clear = shown.every(
      (other) =>
        label.right + gap <= other.left ||
        other.right + gap <= label.left ||
        label.bottom + gap <= other.top ||
        other.bottom + gap <= label.top,
    );
    if ((inside || label.rank === 0) && clear) shown.push(label);
  }
  return new Set(shown.map((label) => label.key));
}

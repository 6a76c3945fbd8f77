/** One WebGL view: renderer, camera, orbit controls, keyboard steps, picking and labels, drawn on demand. */
import {
  AmbientLight,
  DirectionalLight,
  PerspectiveCamera,
  Raycaster,
  Scene,
  Vector2,
  Vector3,
  WebGLRenderer,
  type Object3D,
} from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { CSS2DRenderer } from "three/examples/jsm/renderers/CSS2DRenderer.js";
import { fitBoxDistance, fitDistance, fromNdc, isClick, labelsShown, toNdc, viewerKeyAction, type PlacedLabel } from "./pure";

export interface ViewerOptions {
  /** Objects a click or hover can hit; each hit is resolved to one of them through `resolve`. */
  pickables: () => Object3D[];
  /** From the object the ray hit to the thing it stands for (a node, a region), or null. */
  resolve: (hit: Object3D) => string | null;
  onPick: (key: string) => void;
  onHover?: (key: string | null) => void;
}

/** What the browser tests read: counts in data attributes, and where an item is drawn on screen. */
export interface ViewerProbe {
  project(key: string): { x: number; y: number } | null;
}

export type ProbedElement = HTMLElement & { quizsiteViewer?: ViewerProbe };

const FOV = 45;

export class Viewer {
  readonly scene = new Scene();
  readonly camera: PerspectiveCamera;
  readonly controls: OrbitControls;
  private readonly renderer: WebGLRenderer;
  private readonly labels: CSS2DRenderer;
  private readonly raycaster = new Raycaster();
  private readonly resizer: ResizeObserver;
  private readonly objects = new Map<string, Object3D>();
  private frame = 0;
  private down: { x: number; y: number } | null = null;
  private hovered: string | null = null;
  private readonly cleanups: (() => void)[] = [];

  constructor(
    private readonly host: ProbedElement,
    private readonly options: ViewerOptions,
  ) {
    this.scene.add(new AmbientLight(0xffffff, 1.4));
    const sun = new DirectionalLight(0xffffff, 2.2);
    sun.position.set(3, 5, 4);
    this.scene.add(sun);

    const { width, height } = this.size();
    this.camera = new PerspectiveCamera(FOV, width / height, 0.01, 1000);
    this.renderer = new WebGLRenderer({ antialias: true, alpha: true });
    this.renderer.setPixelRatio(Math.min(devicePixelRatio || 1, 2));
    this.renderer.setSize(width, height);
    this.renderer.domElement.setAttribute("aria-hidden", "true");
    host.appendChild(this.renderer.domElement);

    this.labels = new CSS2DRenderer();
    this.labels.setSize(width, height);
    this.labels.domElement.className = "three-labels";
    this.labels.domElement.setAttribute("aria-hidden", "true");
    host.appendChild(this.labels.domElement);

    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.enableDamping = false;
    this.controls.addEventListener("change", () => this.requestRender());
    // OrbitControls takes every touch (touch-action: none), so on a touch screen a swipe over the scene
    // could not scroll the page past it. A vertical swipe scrolls the page; a sideways one turns the scene.
    if (matchMedia("(pointer: coarse)").matches) this.renderer.domElement.style.touchAction = "pan-y";

    this.resizer = new ResizeObserver(() => this.resize());
    this.resizer.observe(host);

    const canvas = this.renderer.domElement;
    this.listen(canvas, "pointerdown", (event) => {
      this.down = { x: event.clientX, y: event.clientY };
    });
    this.listen(canvas, "pointerup", (event) => {
      const start = this.down;
      this.down = null;
      if (start && isClick(start, { x: event.clientX, y: event.clientY })) {
        const key = this.pick(event.clientX, event.clientY);
        if (key !== null) this.options.onPick(key);
      }
    });
    this.listen(canvas, "pointermove", (event) => {
      if (event.buttons !== 0) return;
      this.setHovered(this.pick(event.clientX, event.clientY));
    });
    this.listen(canvas, "pointerleave", () => this.setHovered(null));
    this.listen(host, "keydown", (event) => this.onKey(event));

    host.quizsiteViewer = { project: (key) => this.project(key) };
  }

  /** Registers what picking resolves to, so `project` can find it for the tests and the panel. */
  register(key: string, object: Object3D): void {
    this.objects.set(key, object);
  }

  /** Points the camera at a sphere of this centre and radius, from the given direction, and keeps it as home. */
  frameSphere(centre: Vector3, radius: number, direction: Vector3): void {
    this.frameAt(centre, fitDistance(radius, FOV, this.camera.aspect) * 1.05, radius, direction);
  }

  /** Points the camera at a box of these half sizes from the given direction, near enough that the box,
   * as seen from there, just fills the view. */
  frameBox(centre: Vector3, half: Vector3, direction: Vector3): void {
    const back = direction.clone().normalize();
    const right = new Vector3(0, 1, 0).cross(back).normalize();
    const up = back.clone().cross(right).normalize();
    const across = (axis: Vector3) => Math.abs(axis.x) * half.x + Math.abs(axis.y) * half.y + Math.abs(axis.z) * half.z;
    const seen = { x: across(right), y: across(up), z: across(back) };
    const distance = fitBoxDistance(seen, FOV, this.camera.aspect) * 1.1;
    this.frameAt(centre, distance, half.length(), direction);
  }

  private frameAt(centre: Vector3, distance: number, radius: number, direction: Vector3): void {
    this.camera.position.copy(centre).add(direction.clone().normalize().multiplyScalar(distance));
    this.camera.near = Math.max(0.01, distance / 100);
    this.camera.far = distance * 10;
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(centre);
    this.controls.minDistance = radius * 0.3;
    this.controls.maxDistance = distance * 4;
    this.controls.update();
    this.controls.saveState();
    this.requestRender();
  }

  requestRender(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderer.render(this.scene, this.camera);
      this.labels.render(this.scene, this.camera);
      this.declutter();
    });
  }

  /** Hides the labels that would overlap a nearer or chosen one, or be cut off at the scene's edge. */
  private declutter(): void {
    const elements = Array.from(this.labels.domElement.querySelectorAll<HTMLElement>(".three-label"));
    const placed: PlacedLabel[] = elements.map((element, key) => {
      const rect = element.getBoundingClientRect();
      const chosen = element.classList.contains("is-selected") || element.classList.contains("is-hovered");
      // CSS2DRenderer orders labels by distance: a higher z-index is nearer the camera.
      const nearness = Number(element.style.zIndex) || 0;
      const rank = chosen ? 0 : element.classList.contains("three-link-label") ? 1 : 1e6 - nearness;
      return { key, left: rect.left, top: rect.top, right: rect.right, bottom: rect.bottom, rank };
    });
    const shown = labelsShown(placed, this.renderer.domElement.getBoundingClientRect());
    elements.forEach((element, key) => element.classList.toggle("is-crowded", !shown.has(key)));
  }

  project(key: string): { x: number; y: number } | null {
    const object = this.objects.get(key);
    if (!object) return null;
    // The camera's matrices are otherwise brought up to date only when the next frame is drawn.
    this.camera.updateMatrixWorld();
    const point = object.getWorldPosition(new Vector3()).project(this.camera);
    if (point.z > 1 || point.z < -1) return null;
    const rect = this.renderer.domElement.getBoundingClientRect();
    const local = fromNdc(point.x, point.y, rect);
    return { x: rect.left + local.x, y: rect.top + local.y };
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    for (const cleanup of this.cleanups) cleanup();
    this.resizer.disconnect();
    this.controls.dispose();
    this.scene.traverse((object) => {
      const mesh = object as Object3D & { geometry?: { dispose(): void }; material?: unknown };
      mesh.geometry?.dispose();
      const materials = Array.isArray(mesh.material) ? mesh.material : mesh.material ? [mesh.material] : [];
      for (const material of materials as { dispose(): void }[]) material.dispose();
    });
    this.renderer.dispose();
    this.renderer.forceContextLoss();
    this.renderer.domElement.remove();
    this.labels.domElement.remove();
    delete this.host.quizsiteViewer;
  }

  private listen<K extends keyof HTMLElementEventMap>(
    target: HTMLElement,
    type: K,
    handler: (event: HTMLElementEventMap[K]) => void,
  ): void {
    target.addEventListener(type, handler);
    this.cleanups.push(() => target.removeEventListener(type, handler));
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(1, this.host.clientWidth), height: Math.max(1, this.host.clientHeight) };
  }

  private resize(): void {
    const { width, height } = this.size();
    this.camera.aspect = width / height;
    this.camera.updateProjectionMatrix();
    this.renderer.setSize(width, height);
    this.labels.setSize(width, height);
    this.requestRender();
  }

  private pick(clientX: number, clientY: number): string | null {
    const ndc = toNdc(clientX, clientY, this.renderer.domElement.getBoundingClientRect());
    this.camera.updateMatrixWorld();
    this.raycaster.setFromCamera(new Vector2(ndc.x, ndc.y), this.camera);
    for (const hit of this.raycaster.intersectObjects(this.options.pickables(), true)) {
      const key = this.options.resolve(hit.object);
      if (key !== null) return key;
    }
    return null;
  }

  private setHovered(key: string | null): void {
    if (key === this.hovered) return;
    this.hovered = key;
    this.renderer.domElement.classList.toggle("is-pointing", key !== null);
    this.options.onHover?.(key);
  }

  private onKey(event: KeyboardEvent): void {
    if (event.target !== this.host || event.ctrlKey || event.metaKey || event.altKey) return;
    const action = viewerKeyAction(event.key);
    if (action === null) return;
    event.preventDefault();
    if (action.kind === "rotate") {
      if (action.left !== 0) this.controls.rotateLeft(action.left);
      if (action.up !== 0) this.controls.rotateUp(action.up);
    } else if (action.kind === "zoom") {
      // OrbitControls multiplies the distance by the factor it is given: under 1 comes closer.
      this.controls.dollyIn(1 / action.scale);
    } else {
      this.controls.reset();
    }
    this.requestRender();
  }
}

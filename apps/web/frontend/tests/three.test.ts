import { describe, expect, it } from "vitest";
import {
  BANDS,
  cssColour,
  fitBoxDistance,
  fitDistance,
  formatMastery,
  fromNdc,
  initialView,
  isClick,
  LINK_KINDS,
  linkKindLabel,
  masteryBand,
  newVisitId,
  toNdc,
  viewerKeyAction,
  labelsShown,
  ZOOM_STEP,
} from "../src/three/pure";

describe("masteryBand", () => {
  it("keeps concepts nobody studied apart from weak ones", () => {
    expect(masteryBand(0, 0).key).toBe("unstudied");
    expect(masteryBand(0.9, 0).key).toBe("unstudied");
    expect(masteryBand(0, 1).key).toBe("low");
  });

  it("splits at 40% and 70%", () => {
    expect(masteryBand(0.399, 2).key).toBe("low");
    expect(masteryBand(0.4, 2).key).toBe("mid");
    expect(masteryBand(0.699, 2).key).toBe("mid");
    expect(masteryBand(0.7, 2).key).toBe("high");
    expect(masteryBand(1, 2).key).toBe("high");
  });

  it("gives every band its own colour, so the legend can tell them apart", () => {
    expect(new Set(BANDS.map((band) => band.colour)).size).toBe(BANDS.length);
    expect(new Set(Object.values(LINK_KINDS).map((kind) => kind.colour)).size).toBe(Object.keys(LINK_KINDS).length);
    expect(cssColour(0x0f9488)).toBe("#0f9488");
  });
});

describe("formatMastery", () => {
  it("says the percentage and how many cards were studied", () => {
    expect(formatMastery(0.456, 2, 5)).toBe("46% mastery · 2 of 5 cards studied");
    expect(formatMastery(1.2, 1, 1)).toBe("100% mastery · 1 of 1 cards studied");
    expect(formatMastery(0, 0, 0)).toBe("No cards yet");
  });
});

describe("linkKindLabel", () => {
  it("reads each kind as a phrase, and an unknown kind as its words", () => {
    expect(linkKindLabel("part_of")).toBe("is part of");
    expect(linkKindLabel("prerequisite")).toBe("is a prerequisite of");
    expect(linkKindLabel("builds_on")).toBe("builds on");
  });
});

describe("initialView", () => {
  it("shows the list when motion is unwelcome or WebGL is missing", () => {
    expect(initialView(true, false)).toBe("3d");
    expect(initialView(true, true)).toBe("list");
    expect(initialView(false, false)).toBe("list");
  });
});

describe("viewerKeyAction", () => {
  it("rotates with the arrows and zooms with plus and minus", () => {
    expect(viewerKeyAction("ArrowLeft")).toMatchObject({ kind: "rotate", up: 0 });
    const left = viewerKeyAction("ArrowLeft");
    const right = viewerKeyAction("ArrowRight");
    expect(left?.kind === "rotate" && right?.kind === "rotate" && left.left === -right.left).toBe(true);
    expect(viewerKeyAction("ArrowUp")).toMatchObject({ kind: "rotate", left: 0 });
    expect(viewerKeyAction("+")).toEqual({ kind: "zoom", scale: ZOOM_STEP });
    expect(viewerKeyAction("=")).toEqual({ kind: "zoom", scale: ZOOM_STEP });
    expect(viewerKeyAction("-")).toEqual({ kind: "zoom", scale: 1 / ZOOM_STEP });
    expect(viewerKeyAction("0")).toEqual({ kind: "reset" });
  });

  it("leaves other keys to the page", () => {
    expect(viewerKeyAction("Tab")).toBeNull();
    expect(viewerKeyAction("Enter")).toBeNull();
    expect(viewerKeyAction("a")).toBeNull();
  });
});

describe("pointer geometry", () => {
  it("tells a click from a drag", () => {
    expect(isClick({ x: 10, y: 10 }, { x: 13, y: 14 })).toBe(true);
    expect(isClick({ x: 10, y: 10 }, { x: 30, y: 10 })).toBe(false);
  });

  it("maps pixels to device coordinates and back", () => {
    const rect = { left: 100, top: 50, width: 400, height: 200 };
    expect(toNdc(100, 50, rect)).toEqual({ x: -1, y: 1 });
    expect(toNdc(300, 150, rect)).toEqual({ x: 0, y: 0 });
    expect(toNdc(500, 250, rect)).toEqual({ x: 1, y: -1 });
    const ndc = toNdc(180, 90, rect);
    expect(fromNdc(ndc.x, ndc.y, rect)).toEqual({ x: 80, y: 40 });
  });

  it("stands further back for a narrow view than a wide one", () => {
    const wide = fitDistance(1, 45, 1.6);
    const narrow = fitDistance(1, 45, 0.46);
    expect(wide).toBeCloseTo(1 / Math.sin((22.5 * Math.PI) / 180), 6);
    expect(narrow).toBeGreaterThan(wide);
  });
});

describe("fitBoxDistance", () => {
  it("fits a long row by its width on a narrow view, and by its height on a flat one", () => {
    const row = { x: 6, y: 0.25, z: 0.5 };
    const tanHalf = Math.tan((22.5 * Math.PI) / 180);
    const narrow = fitBoxDistance(row, 45, 0.5);
    expect(narrow).toBeCloseTo(6 / (tanHalf * 0.5) + 0.5, 6);
    const tall = { x: 0.1, y: 2, z: 0 };
    expect(fitBoxDistance(tall, 45, 2)).toBeCloseTo(2 / tanHalf, 6);
  });
});

describe("newVisitId", () => {
  it("makes a version 4 UUID from the random bytes", () => {
    const id = newVisitId((bytes) => bytes.fill(0xff));
    expect(id).toBe("ffffffff-ffff-4fff-bfff-ffffffffffff");
    expect(newVisitId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(newVisitId()).not.toBe(newVisitId());
  });
});

describe("labelsShown", () => {
  const bounds = { left: 0, top: 0, right: 400, bottom: 300 };
  const at = (key: number, left: number, top: number, rank: number, width = 80, height = 16) => ({
    key,
    left,
    top,
    right: left + width,
    bottom: top + height,
    rank,
  });

  it("keeps the nearer of two overlapping labels and both of two apart", () => {
    expect(labelsShown([at(1, 100, 100, 50), at(2, 120, 105, 10)], bounds)).toEqual(new Set([2]));
    expect(labelsShown([at(1, 100, 100, 50), at(2, 100, 130, 10)], bounds)).toEqual(new Set([1, 2]));
  });

  it("hides a label cut off at the edge, unless it is the one chosen", () => {
    expect(labelsShown([at(1, 350, 10, 5)], bounds)).toEqual(new Set());
    expect(labelsShown([at(1, 350, 10, 0)], bounds)).toEqual(new Set([1]));
  });

  it("shows the chosen label over a nearer one, and skips labels not drawn", () => {
    expect(labelsShown([at(1, 100, 100, 3), at(2, 110, 100, 0)], bounds)).toEqual(new Set([2]));
    expect(labelsShown([at(1, 0, 0, 1, 0, 0)], bounds)).toEqual(new Set());
  });
});

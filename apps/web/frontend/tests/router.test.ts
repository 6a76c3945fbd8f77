import { describe, expect, it } from "vitest";
import { matchPath, safeNext } from "../src/router";

describe("matchPath", () => {
  it("matches routes and decodes parameters", () => {
    expect(matchPath("/decks/tf-data/study")).toMatchObject({ route: { name: "deck-study" }, params: { slug: "tf-data" } });
    expect(matchPath("/lessons/a%20b/")).toMatchObject({ route: { name: "lesson" }, params: { slug: "a b" } });
    expect(matchPath("/").route?.name).toBe("home");
  });

  it("finds nothing for other paths", () => {
    expect(matchPath("/decks//study").route).toBeNull();
    expect(matchPath("/nope").route).toBeNull();
  });
});

describe("safeNext", () => {
  it("keeps same-site paths only", () => {
    expect(safeNext("/lessons/x?y=1")).toBe("/lessons/x?y=1");
    expect(safeNext("//evil.example")).toBe("/");
    expect(safeNext("https://evil.example")).toBe("/");
    expect(safeNext("/\\evil.example")).toBe("/");
    expect(safeNext(null)).toBe("/");
  });
});

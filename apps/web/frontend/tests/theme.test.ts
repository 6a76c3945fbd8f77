import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { themeChoiceParse, themeShown } from "../src/theme";

describe("themeChoiceParse", () => {
  it("keeps light and dark, and reads anything else as the device's setting", () => {
    expect(themeChoiceParse("light")).toBe("light");
    expect(themeChoiceParse("dark")).toBe("dark");
    expect(themeChoiceParse(null)).toBe("system");
    expect(themeChoiceParse("Dark")).toBe("system");
    expect(themeChoiceParse("")).toBe("system");
  });
});

describe("themeShown", () => {
  it("follows the device unless a theme was chosen", () => {
    expect(themeShown("system", true)).toBe("dark");
    expect(themeShown("system", false)).toBe("light");
    expect(themeShown("light", true)).toBe("light");
    expect(themeShown("dark", false)).toBe("dark");
  });
});

const css = readFileSync(new URL("../src/app.css", import.meta.url), "utf8");
// The palette as app.css declares it: each colour a light-dark(light, dark) pair.
const root = css.slice(css.indexOf(":root {"), css.indexOf("}", css.indexOf(":root {")));
const palette = new Map(
  [...root.matchAll(/--([\w-]+):\s*light-dark\((#[0-9a-f]{6}),\s*(#[0-9a-f]{6})\);/g)].map(
    (m): [string, [string, string]] => [m[1] ?? "", [m[2] ?? "", m[3] ?? ""]],
  ),
);

function luminance(hex: string): number {
  const linear = (at: number) => {
    const c = parseInt(hex.slice(at, at + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(1) + 0.7152 * linear(3) + 0.0722 * linear(5);
}

function contrast(one: string, other: string): number {
  const [a, b] = [luminance(one), luminance(other)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

// Text colours and what they are read on; 4.5:1 is WCAG AA for body text.
const TEXT_ON: [string, string[]][] = [
  ["text", ["bg", "surface", "info-bg", "warning-bg", "tip-bg", "code-bg", "active-line"]],
  ["muted", ["bg", "surface", "gutter-bg"]],
  ["accent", ["bg", "surface"]],
  ["accent-text", ["accent"]],
  ["error-text", ["error-bg"]],
  ["again", ["surface", "bg"]],
  ["again-text", ["again"]],
  ["hard", ["surface"]],
  ["good", ["surface", "bg"]],
  ["good-strong", ["tip-bg", "surface"]],
  ["easy", ["surface"]],
  ["pre-text", ["pre-bg"]],
  ["code-keyword", ["surface", "active-line"]],
  ["code-string", ["surface", "active-line"]],
  ["code-number", ["surface", "active-line"]],
  ["code-comment", ["surface", "active-line"]],
  ["code-function", ["surface", "active-line"]],
  ["code-definition", ["surface", "active-line"]],
  ["pre-keyword", ["pre-bg"]],
  ["pre-string", ["pre-bg"]],
  ["pre-number", ["pre-bg"]],
  ["pre-comment", ["pre-bg"]],
  ["pre-function", ["pre-bg"]],
  ["pre-definition", ["pre-bg"]],
];

describe("the palette", () => {
  it("gives every colour a light and a dark value", () => {
    const declared = [...root.matchAll(/^\s*--([\w-]+):\s*(.+);$/gm)].map((m) => ({ name: m[1], value: m[2] ?? "" }));
    const colours = declared.filter(({ value }) => value.startsWith("#") || value.startsWith("light-dark"));
    expect(colours.length).toBeGreaterThan(30);
    expect(colours.filter(({ value }) => !value.startsWith("light-dark")).map(({ name }) => name)).toEqual([]);
  });

  it.each(["light", "dark"] as const)("keeps text at 4.5:1 or more against what it is read on, %s", (mode) => {
    const pick = (name: string) => {
      const pair = palette.get(name);
      if (!pair) throw new Error(`--${name} is not in the palette`);
      return pair[mode === "light" ? 0 : 1] ?? "";
    };
    const short = TEXT_ON.flatMap(([text, grounds]) =>
      grounds
        .map((ground) => ({ pair: `--${text} on --${ground}`, ratio: contrast(pick(text), pick(ground)) }))
        .filter(({ ratio }) => ratio < 4.5),
    );
    expect(short).toEqual([]);
  });

  it.each(["light", "dark"] as const)("keeps the focus ring and controls' borders at 3:1 against the page, %s", (mode) => {
    const pick = (name: string) => palette.get(name)?.[mode === "light" ? 0 : 1] ?? "";
    for (const name of ["focus", "control-border"]) {
      for (const ground of ["bg", "surface"]) {
        expect(contrast(pick(name), pick(ground)), `--${name} on --${ground}`).toBeGreaterThanOrEqual(3);
      }
    }
  });
});

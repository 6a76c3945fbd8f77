import { describe, expect, it } from "vitest";
import { parseBlocks, parseInline } from "../src/text";

describe("parseBlocks", () => {
  it("joins wrapped lines and splits paragraphs on blank lines", () => {
    expect(parseBlocks("one\ntwo\n\nthree")).toEqual([
      { kind: "paragraph", text: "one two" },
      { kind: "paragraph", text: "three" },
    ]);
  });

  it("reads bullet lists", () => {
    expect(parseBlocks("- a\n- b\n  more")).toEqual([{ kind: "list", items: ["a", "b more"] }]);
  });
});

describe("parseInline", () => {
  it("keeps markup-looking text literal", () => {
    expect(parseInline("<script>x</script> and `map()`")).toEqual([
      { text: "<script>x</script> and " },
      { text: "map()", code: true },
    ]);
  });
});

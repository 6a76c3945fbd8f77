import { describe, expect, it } from "vitest";
import { cardMediaSource, mediaLabel, parseBlocks, parseInline } from "../src/text";

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

describe("card media", () => {
  it("loads only this site's media", () => {
    expect(cardMediaSource("/media/ab12/chart.png")).toBe("/media/ab12/chart.png");
    expect(cardMediaSource("https://evil.example/x.png")).toBeNull();
    expect(cardMediaSource("//evil.example/media/x.png")).toBeNull();
    expect(cardMediaSource("/media//evil.example/x.png")).toBeNull();
    expect(cardMediaSource("/media/\\evil")).toBeNull();
    expect(cardMediaSource("/static/web/app.js")).toBeNull();
    expect(cardMediaSource(null)).toBeNull();
  });

  it("names an image or a sound by its own alt text, else by its file name, never by the hash", () => {
    expect(mediaLabel("image", "/media/ab12/loss%20chart.png")).toBe("Image: loss chart");
    expect(mediaLabel("image", "/media/ab12/loss%20chart.png", " Training loss per epoch ")).toBe("Training loss per epoch");
    expect(mediaLabel("sound", "/media/ab12/say_it-again.mp3")).toBe("Sound: say it again");
    expect(mediaLabel("image", "/media/ab12/%E0%A4%A.png")).toBe("Image: %E0%A4%A");
  });
});

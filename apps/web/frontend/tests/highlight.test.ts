import { describe, expect, it } from "vitest";
import { codeSpans } from "../src/lesson/highlight";

describe("codeSpans", () => {
  const code = 'import tensorflow as tf\n\ndef build(files):  # one pass\n    return tf.data.Dataset.from_tensor_slices(files).batch(32, drop_remainder=True)\n';

  it("joins back to the code exactly", () => {
    expect(codeSpans(code, "python").map((span) => span.text).join("")).toBe(code);
  });

  it("colours keywords, names defined, calls, numbers, strings and comments", () => {
    const kinds = new Map(codeSpans(code, "python").filter((span) => span.kind).map((span) => [span.text, span.kind]));
    expect(kinds.get("import")).toBe("tok-keyword");
    expect(kinds.get("def")).toBe("tok-keyword");
    expect(kinds.get("build")).toBe("tok-definition");
    expect(kinds.get("batch")).toBe("tok-function");
    expect(kinds.get("32")).toBe("tok-number");
    expect(kinds.get("True")).toBe("tok-number");
    expect(kinds.get("# one pass")).toBe("tok-comment");
    expect(codeSpans('x = "a"', "Python").find((span) => span.kind === "tok-string")?.text).toBe('"a"');
  });

  it("leaves other languages as plain text", () => {
    expect(codeSpans("SELECT 1;", "sql")).toEqual([{ text: "SELECT 1;", kind: null }]);
    expect(codeSpans("", "python")).toEqual([]);
  });
});

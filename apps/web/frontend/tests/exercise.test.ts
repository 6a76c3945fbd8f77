import { describe, expect, it } from "vitest";
import * as X from "../src/exercise/logic";

class MemoryStorage implements X.DraftStorage {
  items = new Map<string, string>();
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
}

function pipelineTiming(epoch: number): X.Timing["submission"] {
  return {
    first_batch_seconds: 0.1,
    epoch_seconds: epoch,
    batches_per_second: 10,
    input_wait_fraction: 0.2,
    total_seconds: epoch * 2,
    measured_epochs: 1,
    epoch_spread: 0,
  };
}

describe("the draft", () => {
  it("is the starter code until the learner changes it, then kept per exercise", () => {
    const storage = new MemoryStorage();
    expect(X.draftRead(storage, "a", "starter")).toBe("starter");
    X.draftWrite(storage, "a", "mine", "starter");
    expect(X.draftRead(storage, "a", "starter")).toBe("mine");
    expect(X.draftRead(storage, "b", "other starter")).toBe("other starter");
  });

  it("is forgotten once it equals the starter again, and survives a storage that refuses", () => {
    const storage = new MemoryStorage();
    X.draftWrite(storage, "a", "mine", "starter");
    X.draftWrite(storage, "a", "starter", "starter");
    expect(storage.items.size).toBe(0);
    const refusing: X.DraftStorage = {
      getItem: () => {
        throw new Error("denied");
      },
      setItem: () => {
        throw new Error("quota");
      },
      removeItem: () => undefined,
    };
    expect(X.draftRead(refusing, "a", "starter")).toBe("starter");
    expect(() => X.draftWrite(refusing, "a", "mine", "starter")).not.toThrow();
    expect(X.draftRead(null, "a", "starter")).toBe("starter");
  });
});

describe("grading progress", () => {
  it("orders the phases and labels a failure as such", () => {
    expect(X.phaseIndex("queued")).toBe(0);
    expect(X.phaseIndex("timing")).toBeGreaterThan(X.phaseIndex("checking"));
    expect(X.isFinished("done") && X.isFinished("failed")).toBe(true);
    expect(X.isFinished("timing")).toBe(false);
    expect(X.statusLabel("failed")).toBe("Could not be graded");
    expect(X.statusLabel("checking")).toMatch(/Checking/);
  });

  it("shows progress as whole percent, clamped", () => {
    expect(X.percent(0.304)).toBe(30);
    expect(X.percent(1.7)).toBe(100);
    expect(X.percent(Number.NaN)).toBe(0);
  });

  it("polls less often the longer a grading takes, up to a ceiling", () => {
    expect(X.pollDelay(0)).toBeLessThan(X.pollDelay(5));
    expect(X.pollDelay(1000)).toBe(3000);
  });
});

describe("the result", () => {
  it("scales the timing bars to the slowest pipeline", () => {
    const bars = X.timingBars({
      submission: pipelineTiming(1),
      naive: pipelineTiming(4),
      expert: pipelineTiming(0.5),
      rewrites_off: true,
      note: "",
    });
    expect(bars.map((bar) => [bar.key, bar.fraction])).toEqual([
      ["submission", 0.25],
      ["naive", 1],
      ["expert", 0.125],
    ]);
  });

  it("draws no bar from a time that is not a number", () => {
    const bars = X.timingBars({
      submission: pipelineTiming(Number.NaN),
      naive: pipelineTiming(0),
      expert: pipelineTiming(0),
      rewrites_off: true,
      note: "",
    });
    expect(bars.every((bar) => bar.fraction === 0)).toBe(true);
  });

  it("says times, scores and speed-ups in words a learner reads", () => {
    expect(X.formatSeconds(0.41234)).toBe("0.412 s");
    expect(X.formatSeconds(12.345)).toBe("12.3 s");
    expect(X.formatSeconds(0.0008)).toBe("0.8 ms");
    expect(X.formatScore(87.25, 100)).toBe("87.3 / 100");
    expect(X.speedupText(2.43, "naive reference")).toBe("2.4× the naive reference’s speed");
    expect(X.speedupText(0.5, "expert reference")).toBe("0.50× the expert reference’s speed");
    // Within 5 % of the reference: never "1× slower".
    expect(X.speedupText(0.98, "naive reference")).toBe("0.98×, about as fast as the naive reference");
    expect(X.speedupText(1.04, "naive reference")).toBe("1.04×, about as fast as the naive reference");
    expect(X.speedupText(12.4, "naive reference")).toBe("12× the naive reference’s speed");
    expect(X.speedupText(1.01, "expert reference")).toBe("1.01×, about as fast as the expert reference");
    expect(X.scoreParts({ correctness: 60, correctness_max: 60, speed: 12.25, speed_max: 40, speed_timed: true })).toBe(
      "correctness 60 of 60, speed 12.3 of 40",
    );
    expect(X.scoreParts({ correctness: 0, correctness_max: 60, speed: 0, speed_max: 40, speed_timed: false })).toBe(
      "correctness 0 of 60, speed not timed",
    );
    expect(X.scoreParts({ correctness: 60, speed: 40, speed_timed: true })).toBe("correctness 60, speed 40");
    const checks = [
      { passed: true, ran: true },
      { passed: false, ran: true },
      { passed: false, ran: false },
      { passed: false },
    ];
    expect(checks.map(X.checkOutcome)).toEqual(["passed", "failed", "not run", "failed"]);
    expect(X.checkTally(checks)).toBe("1 of 4 passed, 2 failed, 1 not run");
    expect(X.checkTally(checks.slice(0, 2))).toBe("1 of 2 passed");
    expect(X.phaseProgressText({ done: 3, total: 9, seconds_left: 6.4 })).toBe("step 4 of 9 · about 6 s left");
    expect(X.phaseProgressText({ done: 9, total: 9, seconds_left: 0 })).toBe("step 9 of 9 · about 1 s left");
    expect(X.phaseProgressText({ done: null, total: null, seconds_left: 200 })).toBe("about 3 min left");
    expect(X.phaseProgressText({ done: null, total: null, seconds_left: null })).toBe("");
    expect(X.speedupText(undefined, "x")).toBe("");
    const profile = {
      stages: [
        { path: "BatchV2::Map::TFRecord", operation: "TFRecord", kind: "read", parallel: false, seconds_per_batch: 0.001, share: 0.004 },
        { path: "BatchV2::Map", operation: "Map", kind: "map", parallel: false, seconds_per_batch: 0.2, share: 0.9 },
        { path: "BatchV2", operation: "BatchV2", kind: "batch", parallel: false, seconds_per_batch: 0.02, share: 0.096 },
        { path: "Prefetch", operation: "Prefetch", kind: "prefetch", parallel: true, seconds_per_batch: 0, share: 0 },
      ],
      batches: 32,
      slowest: "BatchV2::Map",
      input_bound: { verdict: "highly" as const, input_wait_fraction: 0.418, thresholds: [0.05, 0.2] },
      advice: "Run the map in parallel.",
    };
    const bars = X.stageBars(profile);
    expect(bars.map((bar) => [bar.kind, bar.slowest])).toEqual([
      ["read", false],
      ["map", true],
      ["batch", false],
      ["prefetch", false],
    ]);
    expect(bars.map((bar) => X.sharePercent(bar.share))).toEqual(["<1 %", "90 %", "10 %", "0 %"]);
    expect(X.inputBoundText(profile.input_bound)).toBe(
      "Highly input-bound: the training step waited for input 42 % of the time",
    );
    expect(X.inputBoundText({ verdict: "not", input_wait_fraction: 0.01, thresholds: [0.05, 0.2] })).toBe(
      "Not input-bound: the training step waited for input 1 % of the time",
    );
    expect(X.inputBoundText(null)).toBe("");
    expect(X.verdictLabel("wrong_output")).toBe("Wrong output");
    expect(X.verdictLabel("something_new")).toBe("something new");
  });
});

describe("what an exercise practises", () => {
  it("names each deck of its cards once, in the order the cards first name them", () => {
    const card = (deck: string, slug: string) => ({ id: slug.length, deck, slug, term: slug });
    const concepts = [
      { slug: "parsing", name: "Parsing", cards: [card("pipelines", "schema"), card("formats", "example")] },
      { slug: "empty", name: "Empty", cards: [] },
      { slug: "shuffling", name: "Shuffling", cards: [card("formats", "buffer"), card("pipelines", "seed")] },
    ];
    expect(X.practisedDecks(concepts)).toEqual(["pipelines", "formats"]);
    expect(X.practisedDecks([])).toEqual([]);
  });
});

describe("lint findings in the editor", () => {
  const text = "import tensorflow as tf\n\ndef f():\n    return 1\n";
  const lines = text.split("\n");
  const doc: X.LineDoc = {
    lines: lines.length,
    line(n: number) {
      const from = lines.slice(0, n - 1).reduce((sum, line) => sum + line.length + 1, 0);
      const line = lines[n - 1] ?? "";
      return { from, to: from + line.length, text: line };
    },
  };

  it("marks each finding on its line, indentation left out", () => {
    const [diagnostic] = X.findingsToDiagnostics(doc, [{ rule: "r", line: 4, message: "m" }]);
    expect(diagnostic).toEqual({ from: 38, to: 46, severity: "warning", source: "r", message: "m" });
    expect(text.slice(diagnostic?.from, diagnostic?.to)).toBe("return 1");
  });

  it("keeps a finding past the end of the document on its last line", () => {
    const [past, before] = X.findingsToDiagnostics(doc, [
      { rule: "r", line: 99, message: "m" },
      { rule: "r", line: 0, message: "m" },
    ]);
    expect(past?.from).toBe(doc.line(doc.lines).from);
    expect(before?.from).toBe(0);
  });
});

describe("the prompt", () => {
  it("keeps paragraphs, lists and indented code apart", () => {
    const blocks = X.parsePrompt(
      [
        "Some data comes",
        "from a simulator.",
        "",
        "- observation: float32",
        "- label: int",
        "",
        "Apply these options:",
        "",
        "    options = tf.data.Options()",
        "        nested = True",
        "",
        "    dataset = dataset.with_options(options)",
        "",
        "Done.",
      ].join("\n"),
    );
    expect(blocks).toEqual([
      { kind: "paragraph", text: "Some data comes from a simulator." },
      { kind: "list", items: ["observation: float32", "label: int"] },
      { kind: "paragraph", text: "Apply these options:" },
      { kind: "code", code: "options = tf.data.Options()\n    nested = True\n\ndataset = dataset.with_options(options)" },
      { kind: "paragraph", text: "Done." },
    ]);
  });

  it("never turns markup into anything but text", () => {
    expect(X.parsePrompt("<img src=x onerror=alert(1)>")).toEqual([
      { kind: "paragraph", text: "<img src=x onerror=alert(1)>" },
    ]);
  });
});

describe("submissions", () => {
  const base = { url: "", exercise: "e", learner: "l", progress: 0, verdict: "", score: null, result: null, error: "" };
  const make = (id: number, status: X.SubmissionStatus): X.Submission => ({
    ...base,
    id,
    status,
    attempts: 0,
    created_at: "",
    started_at: null,
    finished_at: null,
    code: "",
  } as X.Submission);

  it("puts a new submission first and replaces a known one in place", () => {
    const list = [make(2, "done"), make(1, "done")];
    expect(X.upsertSubmission(list, make(3, "queued")).map((s) => s.id)).toEqual([3, 2, 1]);
    const updated = X.upsertSubmission(list, make(1, "failed"));
    expect(updated.map((s) => [s.id, s.status])).toEqual([
      [2, "done"],
      [1, "failed"],
    ]);
  });

  it("makes client ids that look like UUIDs and differ", () => {
    const a = X.newClientId();
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(X.newClientId()).not.toBe(a);
  });
});

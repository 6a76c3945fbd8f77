import { describe, expect, it } from "vitest";
import { ApiProblem, NetworkProblem } from "../src/api/errors";
import { memoryStorage } from "../src/offline/memory";
import {
  BACKOFF_FIRST_S,
  BACKOFF_MAX_S,
  RETRY_AFTER_MAX_S,
  backoffSeconds,
  describeRefusals,
  itemFaults,
  syncQueue,
  waitingText,
  type QueuedReview,
  type SendBatch,
} from "../src/offline/queue";
import {
  KEPT_DECKS,
  forgetKeptStudies,
  keepStudy,
  keptDecks,
  keptStudy,
  type KeptStorage,
  type StudyOutput,
} from "../src/offline/keptStudy";
import type { ReviewPayload, ReviewResult } from "../src/reviews";

const OWNER = 7;

function queued(n: number, owner: number = OWNER): QueuedReview {
  const id = `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
  return {
    id,
    owner,
    term: `term ${n}`,
    review: { card: n, rating: 3, duration_ms: 1000, reviewed_at: `2026-01-01T00:00:${String(n).padStart(2, "0")}Z`, client_review_id: id },
  };
}

function result(review: ReviewPayload, duplicate: boolean): ReviewResult {
  return {
    id: review.card * 10,
    card: review.card,
    kind: "review",
    rating: 3,
    reviewed_at: review.reviewed_at ?? "",
    client_review_id: review.client_review_id,
    state: null,
    due: null,
    duplicate,
    replayed: false,
    recall_probability: null,
    recall_computed_at: "2026-01-01T00:00:00Z",
  };
}

/** A server that records each client_review_id once, as the real one does, and keeps every request. */
function server() {
  const recorded = new Map<string, ReviewPayload>();
  const requests: string[][] = [];
  const send: SendBatch = async (reviews) => {
    requests.push(reviews.map((review) => review.client_review_id));
    return reviews.map((review) => {
      const duplicate = recorded.has(review.client_review_id);
      if (!duplicate) recorded.set(review.client_review_id, review);
      return result(review, duplicate);
    });
  };
  return { recorded, requests, send };
}

function refusal(status: number, fields: Record<string, string[]>, code = "invalid"): ApiProblem {
  return new ApiProblem(status, { error: { code, message: "Some reviews were refused.", fields } }, null);
}

async function filled(...numbers: number[]) {
  const storage = memoryStorage();
  for (const n of numbers) await storage.add(queued(n));
  return storage;
}

describe("offline review queue", () => {
  it("sends the waiting reviews in the order they were made, and empties the queue", async () => {
    const storage = await filled(3, 1, 2);
    const { requests, send } = server();
    const outcome = await syncQueue(storage, OWNER, send);
    expect(requests).toEqual([[queued(3).id, queued(1).id, queued(2).id]]);
    expect(outcome).toMatchObject({ saved: 3, refused: [], left: 0, failure: null });
    expect(await storage.list(OWNER)).toEqual([]);
  });

  it("keeps the order across batches", async () => {
    const storage = await filled(1, 2, 3, 4, 5);
    const { requests, send } = server();
    await syncQueue(storage, OWNER, send, 2);
    expect(requests.map((ids) => ids.map((id) => Number(id.slice(-2))))).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("keeps everything after a network failure and sends it on the next attempt", async () => {
    const storage = await filled(1, 2);
    const offline: SendBatch = async () => {
      throw new NetworkProblem(new TypeError("Failed to fetch"));
    };
    const failed = await syncQueue(storage, OWNER, offline);
    expect(failed.left).toBe(2);
    expect(failed.failure).toBeInstanceOf(NetworkProblem);
    expect((await storage.list(OWNER)).map((item) => item.id)).toEqual([queued(1).id, queued(2).id]);

    const { recorded, send } = server();
    const retried = await syncQueue(storage, OWNER, send);
    expect(retried).toMatchObject({ saved: 2, left: 0 });
    expect([...recorded.keys()]).toEqual([queued(1).id, queued(2).id]);
  });

  it.each([
    [500, "server_error"],
    [503, "unavailable"],
    [429, "throttled"],
    [409, "sync_in_progress"],
  ])("keeps everything on HTTP %i (%s), with the wait the server asked for", async (status, code) => {
    const storage = await filled(1, 2);
    const send: SendBatch = async () => {
      throw new ApiProblem(status, { error: { code, message: "Not now.", fields: {} } }, "30");
    };
    const outcome = await syncQueue(storage, OWNER, send);
    expect(outcome).toMatchObject({ saved: 0, refused: [], left: 2, retryAfter: 30 });
    expect(await storage.list(OWNER)).toHaveLength(2);
  });

  it("never keeps or sends the same review twice", async () => {
    const storage = memoryStorage();
    await storage.add(queued(1));
    await storage.add(queued(1));
    await storage.add(queued(2));
    expect(await storage.list(OWNER)).toHaveLength(2);

    const { recorded, requests, send } = server();
    // The answer to the first attempt was lost: the server recorded it, the device still has it.
    await send([queued(1).review]);
    const outcome = await syncQueue(storage, OWNER, send);
    expect(outcome).toMatchObject({ saved: 2, left: 0 });
    expect(requests.slice(1)).toEqual([[queued(1).id, queued(2).id]]);
    expect(recorded.size).toBe(2);

    // A second sync has nothing left to send.
    await syncQueue(storage, OWNER, send);
    expect(requests).toHaveLength(2);
  });

  it("drops the items the server refused, reports them, and sends the others again", async () => {
    const storage = await filled(1, 2, 3, 4);
    const { recorded, requests, send: accept } = server();
    let first = true;
    const send: SendBatch = async (reviews) => {
      if (first) {
        first = false;
        requests.push(reviews.map((review) => review.client_review_id));
        throw refusal(400, {
          "reviews.1.card": ["This card is archived and cannot be studied"],
          "reviews.3.client_review_id": ["Already recorded for another review."],
        });
      }
      return accept(reviews);
    };
    const outcome = await syncQueue(storage, OWNER, send);
    expect(outcome.saved).toBe(2);
    expect(outcome.left).toBe(0);
    expect(outcome.refused).toEqual([
      { term: "term 2", message: "This card is archived and cannot be studied." },
      { term: "term 4", message: "Already recorded for another review." },
    ]);
    expect(requests[1]).toEqual([queued(1).id, queued(3).id]);
    expect([...recorded.keys()]).toEqual([queued(1).id, queued(3).id]);
    expect(describeRefusals(outcome.refused.slice(0, 1))).toBe(
      "1 review could not be saved: “term 2”: This card is archived and cannot be studied.",
    );
    expect(describeRefusals(outcome.refused)).toMatch(/^2 reviews could not be saved: /);
  });

  it("treats a 404 naming items as their fault, but not one without item names", () => {
    expect([...itemFaults(refusal(404, { "reviews.0.card": ["No such card."] }, "not_found"), 2).keys()]).toEqual([0]);
    expect(itemFaults(refusal(400, { reviews: ["At most 1000."] }), 2).size).toBe(0);
    // An index the batch does not have is not trusted.
    expect(itemFaults(refusal(400, { "reviews.5.card": ["No such card."] }), 2).size).toBe(0);
    expect(itemFaults(new NetworkProblem(), 2).size).toBe(0);
  });

  it("keeps the reviews when the whole request is refused without naming an item", async () => {
    const storage = await filled(1);
    const send: SendBatch = async () => {
      throw refusal(400, { reviews: ["Expected a list of items."] });
    };
    const outcome = await syncQueue(storage, OWNER, send);
    expect(outcome).toMatchObject({ saved: 0, refused: [], left: 1 });
  });

  it("sends only the signed-in learner's reviews", async () => {
    const storage = await filled(1);
    await storage.add(queued(2, OWNER + 1));
    const { requests, send } = server();
    await syncQueue(storage, OWNER, send);
    expect(requests).toEqual([[queued(1).id]]);
    expect((await storage.list(OWNER + 1)).map((item) => item.id)).toEqual([queued(2).id]);
  });

  it("backs off between bounds, doubling up to the most, and waits at least as long as asked", () => {
    const low = () => 0;
    const high = () => 1;
    expect(backoffSeconds(1, null, low)).toBe(BACKOFF_FIRST_S / 2);
    expect(backoffSeconds(1, null, high)).toBe(BACKOFF_FIRST_S);
    expect(backoffSeconds(2, null, high)).toBe(BACKOFF_FIRST_S * 2);
    expect(backoffSeconds(3, null, high)).toBe(BACKOFF_FIRST_S * 4);
    for (const failures of [1, 2, 5, 10, 100, 10_000]) {
      for (const random of [low, high, Math.random]) {
        const seconds = backoffSeconds(failures, null, random);
        expect(seconds).toBeGreaterThanOrEqual(BACKOFF_FIRST_S / 2);
        expect(seconds).toBeLessThanOrEqual(BACKOFF_MAX_S);
      }
    }
    expect(backoffSeconds(100, null, low)).toBe(BACKOFF_MAX_S / 2);
    expect(backoffSeconds(1, 120, high)).toBe(120);
    expect(backoffSeconds(1, 10 ** 9, high)).toBe(RETRY_AFTER_MAX_S);
    expect(backoffSeconds(0, null, high)).toBe(BACKOFF_FIRST_S);
  });

  it("says how many reviews wait", () => {
    expect(waitingText(1)).toBe("1 review waiting to sync");
    expect(waitingText(3)).toBe("3 reviews waiting to sync");
  });
});

describe("reviews made offline, taken back", () => {
  it("reports the server's id of each review sent, so one sent meanwhile can still be undone", async () => {
    const storage = memoryStorage();
    for (const n of [1, 2]) await storage.add(queued(n));
    const outcome = await syncQueue(storage, OWNER, server().send);
    expect([...outcome.recorded.entries()]).toEqual([
      [queued(1).id, 10],
      [queued(2).id, 20],
    ]);
  });
});

function keptStorage(): KeptStorage & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return {
    values,
    get length() {
      return values.size;
    },
    key: (index) => [...values.keys()][index] ?? null,
    getItem: (key) => values.get(key) ?? null,
    setItem: (key, value) => void values.set(key, value),
    removeItem: (key) => void values.delete(key),
  };
}

function studyOf(deck: string, cards: [number, "new" | "learning" | "review"][]): StudyOutput {
  return {
    deck,
    day_start: "2026-01-01T04:00:00Z",
    day_end: "2026-01-02T04:00:00Z",
    counts: {
      learning_due: cards.filter(([, queue]) => queue === "learning").length,
      reviews_due: cards.filter(([, queue]) => queue === "review").length,
      new_due: cards.filter(([, queue]) => queue === "new").length,
      new_left_today: 20,
      reviews_left_today: 200,
    },
    cards: cards.map(([id, queue]) => ({
      queue,
      card: { id, slug: `c${id}`, term: `t${id}`, definition: "d", example: "", code: "", format: "text", tags: [], anki_guid: "" },
      state: null,
      next_intervals: { again: 60, hard: 330, good: 600, easy: 691200 },
      recall_probability: null,
      recall_computed_at: "2026-01-01T00:00:00Z",
    })),
  };
}

describe("study queues kept on the device", () => {
  const at = "2026-01-01T09:00:00Z";

  it("gives back a deck's queue without the cards reviewed since, counted down in their queues", () => {
    const storage = keptStorage();
    keepStudy(OWNER, { slug: "a", title: "Deck A", study: studyOf("a", [[1, "learning"], [2, "review"], [3, "new"]]), keptAt: at }, storage);
    const kept = keptStudy(OWNER, "a", new Set([1, 3]), storage);
    expect(kept?.title).toBe("Deck A");
    expect(kept?.study.cards.map((item) => item.card.id)).toEqual([2]);
    expect(kept?.study.counts).toMatchObject({ learning_due: 0, reviews_due: 1, new_due: 0 });
    expect(keptStudy(OWNER, "b", new Set(), storage)).toBeNull();
    // Another learner on the same device sees none of it.
    expect(keptStudy(OWNER + 1, "a", new Set(), storage)).toBeNull();
  });

  it("keeps the decks studied last, the latest first, and fewer rather than none when the device is full", () => {
    const storage = keptStorage();
    for (const slug of ["a", "b", "c", "d", "e", "f", "b"]) {
      keepStudy(OWNER, { slug, title: null, study: studyOf(slug, [[1, "new"]]), keptAt: at }, storage);
    }
    expect(keptDecks(OWNER, storage).map((kept) => kept.slug)).toEqual(["b", "f", "e", "d", "c"]);
    expect(KEPT_DECKS).toBe(5);
    const full = keptStorage();
    const setItem = full.setItem;
    full.setItem = (key, value) => {
      if (JSON.parse(value).length > 2) throw new DOMException("full", "QuotaExceededError");
      setItem(key, value);
    };
    for (const slug of ["a", "b", "c"]) keepStudy(OWNER, { slug, title: null, study: studyOf(slug, [[1, "new"]]), keptAt: at }, full);
    expect(keptDecks(OWNER, full).map((kept) => kept.slug)).toEqual(["c", "b"]);
  });

  it("forgets every learner's kept queues on signing out, and nothing else", () => {
    const storage = keptStorage();
    storage.setItem("quizsite.theme", "dark");
    keepStudy(OWNER, { slug: "a", title: null, study: studyOf("a", [[1, "new"]]), keptAt: at }, storage);
    keepStudy(OWNER + 1, { slug: "a", title: null, study: studyOf("a", [[1, "new"]]), keptAt: at }, storage);
    forgetKeptStudies(storage);
    expect([...storage.values.keys()]).toEqual(["quizsite.theme"]);
  });
});

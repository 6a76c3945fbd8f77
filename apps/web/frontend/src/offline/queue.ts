/** Reviews kept on the device while the server cannot be reached, and sending them when it can; the storage is
 * passed in, so the rules hold the same for IndexedDB and for the in-memory storage of the tests. */
import { ApiProblem } from "../api/errors";
import type { ReviewPayload, ReviewResult } from "../reviews";

export interface QueuedReview {
  /** The review's client_review_id: resending it can never record it twice. */
  id: string;
  /** The learner's account id: one device may be shared, and a review is only ever sent as its learner. */
  owner: number;
  review: ReviewPayload;
  /** The card's term, to name it if the server refuses the review. */
  term: string;
}

export interface QueueStorage {
  /** One learner's waiting reviews, oldest first. */
  list(owner: number): Promise<QueuedReview[]>;
  /** Keeps the review after all the others; one whose id is already kept stays as it was. */
  add(item: QueuedReview): Promise<void>;
  remove(ids: readonly string[]): Promise<void>;
}

/** Sends reviews to the batch endpoint: the results in the same order, or throws ApiProblem / NetworkProblem. */
export type SendBatch = (reviews: ReviewPayload[]) => Promise<ReviewResult[]>;

export interface Refusal {
  term: string;
  message: string;
}

export interface SyncOutcome {
  /** Reviews the server recorded now or had already. */
  saved: number;
  /** The server's id of each review recorded, by its client_review_id: what an undo of it needs. */
  recorded: Map<string, number>;
  /** Reviews the server refused for their own fault: they are dropped, never resent. */
  refused: Refusal[];
  /** Reviews still waiting. */
  left: number;
  /** Why the others still wait (network, server, throttling); null when nothing is left. */
  failure: unknown;
  /** Seconds the server asked to wait before the next attempt, if it said. */
  retryAfter: number | null;
}

/** The batch endpoint takes up to 1,000; smaller batches keep one slow request short. */
export const BATCH_SIZE = 200;

const ITEM_FIELD = /^reviews\.(\d+)(?:\.|$)/;

function sentence(text: string): string {
  const trimmed = text.trim();
  return trimmed === "" || /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/**
 * The items of a refused batch that are at fault, by index, with the server's words for each. The batch is
 * all or nothing: the server names every bad item (`reviews.3.card`) and records none, so the others can be
 * sent again as they are. Throttling and a sync already running are not an item's fault.
 */
export function itemFaults(error: unknown, count: number): Map<number, string[]> {
  const faults = new Map<number, string[]>();
  if (!(error instanceof ApiProblem)) return faults;
  if (![400, 404, 409, 422].includes(error.status) || error.code === "sync_in_progress") return faults;
  for (const [field, messages] of Object.entries(error.fields)) {
    const match = ITEM_FIELD.exec(field);
    if (!match) continue;
    const index = Number(match[1]);
    if (index >= count) continue;
    const list = faults.get(index) ?? [];
    list.push(...messages.map(sentence).filter((message) => message !== ""));
    faults.set(index, list);
  }
  return faults;
}

/**
 * Sends everything one learner has waiting, oldest first. Each round either removes at least one review or
 * stops, so it always ends; what the server accepted or already had is removed, what it refused for its own
 * fault is removed and reported, and anything else stays for a later attempt.
 */
export async function syncQueue(
  storage: QueueStorage,
  owner: number,
  send: SendBatch,
  batchSize: number = BATCH_SIZE,
): Promise<SyncOutcome> {
  let saved = 0;
  const recorded = new Map<string, number>();
  const refused: Refusal[] = [];
  for (;;) {
    const waiting = await storage.list(owner);
    if (waiting.length === 0) return { saved, recorded, refused, left: 0, failure: null, retryAfter: null };
    const batch = waiting.slice(0, Math.max(1, batchSize));
    try {
      const results = await send(batch.map((item) => item.review));
      // Results come in the order sent; an item without its result (never expected) is resent next time.
      const done = batch.filter((item, index) => results[index]?.client_review_id === item.id).map((item) => item.id);
      if (done.length === 0) {
        return {
          saved,
          recorded,
          refused,
          left: waiting.length,
          failure: new Error("unexpected answer"),
          retryAfter: null,
        };
      }
      for (const result of results) {
        if (result.client_review_id !== null) recorded.set(result.client_review_id, result.id);
      }
      await storage.remove(done);
      saved += done.length;
    } catch (error) {
      const faults = itemFaults(error, batch.length);
      if (faults.size === 0) {
        const retryAfter = error instanceof ApiProblem ? error.retryAfter : null;
        return { saved, recorded, refused, left: waiting.length, failure: error, retryAfter };
      }
      const bad = [...faults.keys()].sort((a, b) => a - b);
      await storage.remove(bad.map((index) => batch[index]?.id ?? ""));
      for (const index of bad) {
        const messages = faults.get(index) ?? [];
        refused.push({
          term: batch[index]?.term ?? "",
          message: messages.length > 0 ? messages.join(" ") : "The server refused it.",
        });
      }
    }
  }
}

/** "1 review could not be saved: …" in words, naming each card. */
export function describeRefusals(refused: readonly Refusal[]): string {
  if (refused.length === 0) return "";
  const head = refused.length === 1 ? "1 review could not be saved" : `${refused.length} reviews could not be saved`;
  const reasons = refused.map(({ term, message }) => (term ? `“${term}”: ${message}` : message));
  return `${head}: ${reasons.join(" ")}`;
}

export const BACKOFF_FIRST_S = 5;
export const BACKOFF_MAX_S = 300;
/** A Retry-After beyond this is taken as this: a device left open should still try within the hour. */
export const RETRY_AFTER_MAX_S = 3600;

/**
 * Seconds before the next attempt after `failures` failed ones in a row (1 or more): doubling from
 * BACKOFF_FIRST_S up to BACKOFF_MAX_S, each drawn between half and all of it so many devices coming back
 * online together do not send at the same instant, and never sooner than the server asked.
 */
export function backoffSeconds(failures: number, retryAfter: number | null, random: () => number = Math.random): number {
  const exponent = Math.min(30, Math.max(0, failures - 1));
  const ceiling = Math.min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** exponent);
  const share = Math.min(1, Math.max(0, random()));
  const drawn = ceiling / 2 + (ceiling / 2) * share;
  const asked = retryAfter === null ? 0 : Math.min(RETRY_AFTER_MAX_S, Math.max(0, retryAfter));
  return Math.max(drawn, asked);
}

/** The phrase for a count: "1 review waiting to sync", "3 reviews waiting to sync". */
export function waitingText(count: number): string {
  return count === 1 ? "1 review waiting to sync" : `${count} reviews waiting to sync`;
}

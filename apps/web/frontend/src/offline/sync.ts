/** The signed-in learner's waiting reviews: kept on the device, sent on app start, when the connection returns,
 * and on a timer that backs off while it does not. */
import { useEffect, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { isNetworkFailure } from "../api/errors";
import type { ReviewPayload } from "../reviews";
import { indexedDbStorage } from "./idb";
import { memoryStorage } from "./memory";
import { backoffSeconds, syncQueue, type QueueStorage, type Refusal, type SendBatch } from "./queue";

export interface SyncStatus {
  owner: number | null;
  /** Reviews waiting on this device. */
  count: number;
  syncing: boolean;
  /** The last request got no answer (or the browser says it is offline). */
  offline: boolean;
  /** Refused reviews the learner has not dismissed yet. */
  refused: Refusal[];
  /** False when the browser gave no IndexedDB: waiting reviews then last only until the page is closed. */
  persistent: boolean;
}

let status: SyncStatus = { owner: null, count: 0, syncing: false, offline: false, refused: [], persistent: true };
const listeners = new Set<(status: SyncStatus) => void>();

function update(patch: Partial<SyncStatus>): void {
  status = { ...status, ...patch };
  for (const listener of listeners) listener(status);
}

export function getSyncStatus(): SyncStatus {
  return status;
}

export function subscribe(listener: (status: SyncStatus) => void): () => void {
  listeners.add(listener);
  listener(status);
  return () => listeners.delete(listener);
}

export function useSyncStatus(): SyncStatus {
  const [value, setValue] = useState(status);
  useEffect(() => subscribe(setValue), []);
  return value;
}

let storage: QueueStorage | null = null;

function store(): QueueStorage {
  if (storage === null) {
    if (typeof indexedDB === "undefined") return fallBack();
    storage = indexedDbStorage();
  }
  return storage;
}

/** IndexedDB refused (some private modes): the page keeps the reviews itself rather than losing them now. */
function fallBack(): QueueStorage {
  storage = memoryStorage();
  update({ persistent: false });
  return storage;
}

const send: SendBatch = async (reviews) =>
  (await call(client.POST("/api/v1/reviews/batch/", { body: { reviews } }))).results;

// Other tabs of the app share the database: a change there is counted here too.
const channel = typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel("quizsite-offline-reviews");
channel?.addEventListener("message", () => void recount());

function announceChange(): void {
  try {
    channel?.postMessage("changed");
  } catch {
    // Only other tabs' counts lag until their next attempt.
  }
}

async function recount(): Promise<void> {
  const owner = status.owner;
  if (owner === null) return;
  try {
    const waiting = await store().list(owner);
    if (status.owner === owner) update({ count: waiting.length });
  } catch {
    // The count stays as it was; the next attempt tries the storage again.
  }
}

let failures = 0;
let timer: ReturnType<typeof setTimeout> | null = null;
let running: Promise<void> | null = null;
let again = false;

// Sending and taking a review back never interleave: a review being sent cannot also be withdrawn.
let tail: Promise<unknown> = Promise.resolve();
function exclusive<T>(work: () => Promise<T>): Promise<T> {
  const result = tail.then(work, work);
  tail = result.catch(() => undefined);
  return result;
}

// The server's ids of reviews sent from the queue, by client_review_id, so one can still be undone.
const sentIds = new Map<string, number>();
const SENT_IDS_KEPT = 1000;

function rememberSent(recorded: Map<string, number>): void {
  for (const [clientId, id] of recorded) {
    sentIds.delete(clientId);
    sentIds.set(clientId, id);
  }
  while (sentIds.size > SENT_IDS_KEPT) {
    const oldest = sentIds.keys().next().value;
    if (oldest === undefined) break;
    sentIds.delete(oldest);
  }
}

function clearTimer(): void {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

function schedule(seconds: number): void {
  clearTimer();
  timer = setTimeout(() => {
    timer = null;
    void syncNow();
  }, seconds * 1000);
}

function onOnline(): void {
  failures = 0;
  void syncNow();
}

function onOffline(): void {
  update({ offline: true });
}

/** Starts keeping and sending `owner`'s reviews: the app starts it once the learner is known. */
export function startSync(owner: number): void {
  if (status.owner === owner) return;
  stopSync();
  failures = 0;
  update({ owner, count: 0, refused: [], offline: typeof navigator !== "undefined" && navigator.onLine === false });
  addEventListener("online", onOnline);
  addEventListener("offline", onOffline);
  void syncNow();
}

/** Signed out: nothing is sent any more; the reviews stay on the device for that learner's next sign-in. */
export function stopSync(owner?: number): void {
  if (owner !== undefined && status.owner !== owner) return;
  removeEventListener("online", onOnline);
  removeEventListener("offline", onOffline);
  clearTimer();
  update({ owner: null, count: 0, refused: [], syncing: false });
}

/** Keeps a review the server could not be reached for; it is sent with the next successful attempt. */
export async function enqueue(owner: number, review: ReviewPayload, term: string): Promise<void> {
  const item = { id: review.client_review_id, owner, review, term };
  try {
    await store().add(item);
  } catch {
    await fallBack().add(item);
  }
  announceChange();
  if (status.owner !== owner) return;
  update({ offline: true });
  await recount();
  if (timer === null && running === null) schedule(backoffSeconds(failures + 1, null));
}

/** A request just got an answer: if reviews are waiting, now is a good time to send them. */
export function reachedServer(): void {
  if (status.offline) update({ offline: false });
  if (status.count > 0) {
    failures = 0;
    void syncNow();
  }
}

/** What taking back a review kept on this device came to. */
export type Withdrawal =
  | { kind: "withdrawn" }
  | { kind: "sent"; reviewId: number }
  | { kind: "gone" };

/**
 * Takes back a review made offline: removed from the device if it is still waiting (it was never sent), or the
 * server's id of it if it has been sent meanwhile (to undo it there). "gone": neither, the server refused it.
 */
export function withdraw(owner: number, clientReviewId: string): Promise<Withdrawal> {
  return exclusive(async () => {
    const waiting = await store().list(owner);
    if (waiting.some((item) => item.id === clientReviewId)) {
      await store().remove([clientReviewId]);
      announceChange();
      if (status.owner === owner) await recount();
      return { kind: "withdrawn" } as const;
    }
    const sent = sentIds.get(clientReviewId);
    return sent === undefined ? ({ kind: "gone" } as const) : ({ kind: "sent", reviewId: sent } as const);
  });
}

/** The cards of this learner's reviews waiting to sync: a kept study queue leaves them out. */
export async function waitingCardIds(owner: number): Promise<Set<number>> {
  try {
    return new Set((await store().list(owner)).map((item) => item.review.card));
  } catch {
    return new Set();
  }
}

export function dismissRefusals(): void {
  update({ refused: [] });
}

/** One attempt at a time; a call during one makes it go round once more when it ends. */
export function syncNow(): Promise<void> {
  if (running !== null) {
    again = true;
    return running;
  }
  running = (async () => {
    do {
      again = false;
      await exclusive(attempt);
    } while (again);
  })().finally(() => {
    running = null;
  });
  return running;
}

async function attempt(): Promise<void> {
  const owner = status.owner;
  if (owner === null) return;
  clearTimer();
  update({ syncing: true });
  try {
    const outcome = await syncQueue(store(), owner, send);
    rememberSent(outcome.recorded);
    if (outcome.saved > 0 || outcome.refused.length > 0) announceChange();
    if (status.owner !== owner) return;
    update({
      refused: outcome.refused.length > 0 ? [...status.refused, ...outcome.refused] : status.refused,
      offline: isNetworkFailure(outcome.failure),
    });
    // Counted again rather than taken from the outcome: a review may have been kept while this attempt ran.
    await recount();
    if (outcome.failure === null) {
      failures = 0;
      // Kept while this attempt ran: send it now too.
      if (status.count > 0) again = true;
    } else {
      failures += 1;
      schedule(backoffSeconds(failures, outcome.retryAfter));
    }
  } catch {
    // The storage failed, not the server: the reviews are still in it, so try again later.
    failures += 1;
    if (status.owner === owner) schedule(backoffSeconds(failures, null));
  } finally {
    if (status.owner === owner) update({ syncing: false });
  }
}

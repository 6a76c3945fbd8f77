/** The study queues of the decks a learner studied last, kept on the device so that they can be studied with no
 * connection, from the app's very start. Each is what the server last sent for the deck; cards reviewed since
 * (their reviews waiting to sync) are left out when it is read back. Forgotten on signing out. */
import type { components } from "../api/schema";

export type StudyOutput = components["schemas"]["StudyOutput"];

export interface KeptStudy {
  slug: string;
  title: string | null;
  study: StudyOutput;
  /** When the server sent it (ISO 8601). */
  keptAt: string;
}

/** Decks kept per learner: the most recently studied. A deck's queue is a few dozen cards, some kilobytes each. */
export const KEPT_DECKS = 5;
const PREFIX = "quizsite.study.";

export type KeptStorage = Pick<Storage, "getItem" | "setItem" | "removeItem" | "key" | "length">;

function defaultStorage(): KeptStorage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}

function read(storage: KeptStorage, owner: number): KeptStudy[] {
  try {
    const stored = storage.getItem(PREFIX + owner);
    const parsed: unknown = stored === null ? [] : JSON.parse(stored);
    return Array.isArray(parsed) ? (parsed as KeptStudy[]) : [];
  } catch {
    return [];
  }
}

/** Keeps the deck's queue first, dropping the oldest beyond KEPT_DECKS, or more while the device is full. */
export function keepStudy(owner: number, kept: KeptStudy, storage: KeptStorage | null = defaultStorage()): void {
  if (storage === null) return;
  let list = [kept, ...read(storage, owner).filter((other) => other.slug !== kept.slug)].slice(0, KEPT_DECKS);
  while (list.length > 0) {
    try {
      storage.setItem(PREFIX + owner, JSON.stringify(list));
      return;
    } catch {
      // Full: keep fewer decks rather than none, the one just studied last.
      list = list.slice(0, -1);
    }
  }
}

/** The deck's kept queue, without the cards whose reviews are waiting to sync; null when none is kept. */
export function keptStudy(
  owner: number,
  slug: string,
  reviewedCardIds: ReadonlySet<number> = new Set(),
  storage: KeptStorage | null = defaultStorage(),
): KeptStudy | null {
  if (storage === null) return null;
  const kept = read(storage, owner).find((entry) => entry.slug === slug);
  if (!kept) return null;
  const left = kept.study.cards.filter((item) => !reviewedCardIds.has(item.card.id));
  const counts = { ...kept.study.counts };
  for (const item of kept.study.cards) {
    if (!reviewedCardIds.has(item.card.id)) continue;
    if (item.queue === "new") counts.new_due = Math.max(0, counts.new_due - 1);
    else if (item.queue === "learning") counts.learning_due = Math.max(0, counts.learning_due - 1);
    else counts.reviews_due = Math.max(0, counts.reviews_due - 1);
  }
  return { ...kept, study: { ...kept.study, cards: left, counts } };
}

/** The decks kept for this learner, most recently studied first. */
export function keptDecks(owner: number, storage: KeptStorage | null = defaultStorage()): KeptStudy[] {
  return storage === null ? [] : read(storage, owner);
}

/** Signed out: no learner's cards stay on the device. */
export function forgetKeptStudies(storage: KeptStorage | null = defaultStorage()): void {
  if (storage === null) return;
  const keys: string[] = [];
  for (let index = 0; index < storage.length; index++) {
    const key = storage.key(index);
    if (key?.startsWith(PREFIX)) keys.push(key);
  }
  for (const key of keys) storage.removeItem(key);
}

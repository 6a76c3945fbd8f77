/** The waiting reviews in IndexedDB, so a reload or a closed tab loses none of them. */
import type { QueuedReview, QueueStorage } from "./queue";

export const DB_NAME = "quizsite-offline";
export const STORE = "reviews";
const VERSION = 1;

/** As stored: `seq` is the store's own increasing key, which keeps the order reviews were made in. */
interface Row extends QueuedReview {
  seq?: number;
}

function done<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error("IndexedDB request failed"));
  });
}

function finished(transaction: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error ?? new Error("IndexedDB transaction failed"));
    transaction.onabort = () => reject(transaction.error ?? new Error("IndexedDB transaction aborted"));
  });
}

function open(factory: IDBFactory): Promise<IDBDatabase> {
  const request = factory.open(DB_NAME, VERSION);
  request.onupgradeneeded = () => {
    const store = request.result.createObjectStore(STORE, { keyPath: "seq", autoIncrement: true });
    // Unique: the same review can be kept only once, whatever calls add() again.
    store.createIndex("id", "id", { unique: true });
    store.createIndex("owner", "owner", { unique: false });
  };
  return done(request).then((db) => {
    // Another tab upgrading the database later: let it, this one reopens on its next use.
    db.onversionchange = () => db.close();
    return db;
  });
}

export function indexedDbStorage(factory: IDBFactory = indexedDB): QueueStorage {
  let opened: Promise<IDBDatabase> | null = null;
  const db = (): Promise<IDBDatabase> => {
    opened ??= open(factory).catch((error: unknown) => {
      opened = null;
      throw error;
    });
    return opened;
  };

  return {
    async list(owner) {
      const transaction = (await db()).transaction(STORE, "readonly");
      const rows = (await done(transaction.objectStore(STORE).index("owner").getAll(IDBKeyRange.only(owner)))) as Row[];
      rows.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
      return rows.map(({ id, owner: who, review, term }) => ({ id, owner: who, review, term }));
    },

    async add(item) {
      const transaction = (await db()).transaction(STORE, "readwrite");
      const request = transaction.objectStore(STORE).add({ ...item });
      request.onerror = (event) => {
        // Already kept: not a failure, and the transaction must not abort over it.
        if (request.error?.name === "ConstraintError") event.preventDefault();
      };
      await finished(transaction);
    },

    async remove(ids) {
      if (ids.length === 0) return;
      const transaction = (await db()).transaction(STORE, "readwrite");
      const store = transaction.objectStore(STORE);
      for (const id of ids) {
        const lookup = store.index("id").getKey(id);
        lookup.onsuccess = () => {
          if (lookup.result !== undefined) store.delete(lookup.result);
        };
      }
      await finished(transaction);
    },
  };
}

/** A queue storage that lasts as long as the page: for tests, and where the browser gives no IndexedDB. */
import type { QueuedReview, QueueStorage } from "./queue";

export function memoryStorage(): QueueStorage & { items: QueuedReview[] } {
  const items: QueuedReview[] = [];
  return {
    items,
    async list(owner) {
      return items.filter((item) => item.owner === owner).map((item) => structuredClone(item));
    },
    async add(item) {
      if (!items.some((kept) => kept.id === item.id)) items.push(structuredClone(item));
    },
    async remove(ids) {
      const drop = new Set(ids);
      for (let i = items.length - 1; i >= 0; i--) {
        if (drop.has(items[i]?.id ?? "")) items.splice(i, 1);
      }
    },
  };
}

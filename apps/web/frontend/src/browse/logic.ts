/** The card browser's pure logic: the search kept in the address, and each card's state in words. */
import type { components } from "../api/schema";
import { describeInterval } from "../format";

export type BrowsedCard = components["schemas"]["BrowsedCardOutput"];
export type CardState = "new" | "learning" | "review" | "relearning" | "due" | "leech" | "suspended";
export type CardOrder = "course" | "due" | "lapses" | "recent";

export interface CardSearch {
  q: string;
  state: CardState | "";
  concept: string;
  deck: string;
  order: CardOrder;
}

export const EMPTY_SEARCH: CardSearch = { q: "", state: "", concept: "", deck: "", order: "course" };

export const STATE_OPTIONS: { value: CardState | ""; label: string }[] = [
  { value: "", label: "Any state" },
  { value: "new", label: "New (not studied yet)" },
  { value: "learning", label: "Learning" },
  { value: "review", label: "In review" },
  { value: "relearning", label: "Relearning" },
  { value: "due", label: "Due now" },
  { value: "leech", label: "Leeches" },
  { value: "suspended", label: "Suspended" },
];

export const ORDER_OPTIONS: { value: CardOrder; label: string }[] = [
  { value: "course", label: "Course order" },
  { value: "due", label: "Due soonest" },
  { value: "lapses", label: "Most forgotten" },
  { value: "recent", label: "Studied most recently" },
];

const STATES = new Set<string>(STATE_OPTIONS.map((option) => option.value).filter(Boolean));
const ORDERS = new Set<string>(ORDER_OPTIONS.map((option) => option.value));

/** The search an address's query describes; anything it does not know is left at its default. */
export function searchFromQuery(query: URLSearchParams): CardSearch {
  const state = query.get("state") ?? "";
  const order = query.get("order") ?? "course";
  return {
    q: query.get("q") ?? "",
    state: STATES.has(state) ? (state as CardState) : "",
    concept: query.get("concept") ?? "",
    deck: query.get("deck") ?? "",
    order: ORDERS.has(order) ? (order as CardOrder) : "course",
  };
}

/** The query of the address for a search: only what differs from the defaults, in a fixed order. */
export function searchToQuery(search: CardSearch): string {
  const query = new URLSearchParams();
  if (search.q.trim()) query.set("q", search.q.trim());
  if (search.state) query.set("state", search.state);
  if (search.concept) query.set("concept", search.concept);
  if (search.deck) query.set("deck", search.deck);
  if (search.order !== "course") query.set("order", search.order);
  const text = query.toString();
  return text ? `?${text}` : "";
}

/** The API's query parameters for a search and a page. */
export function searchParams(search: CardSearch, page: number, pageSize: number) {
  return {
    page,
    page_size: pageSize,
    ...(search.q.trim() ? { q: search.q.trim() } : {}),
    ...(search.state ? { state: search.state } : {}),
    ...(search.concept ? { concept: search.concept } : {}),
    ...(search.deck ? { deck: search.deck } : {}),
    ...(search.order !== "course" ? { order: search.order } : {}),
  };
}

const STAGE_LABELS: Record<BrowsedCard["stage"], string> = {
  new: "New",
  learning: "Learning",
  review: "In review",
  relearning: "Relearning",
};

export function stageLabel(stage: BrowsedCard["stage"]): string {
  return STAGE_LABELS[stage];
}

/** When the card comes back, in words: "Not studied yet", "Due now", "Due in 3 days", "Suspended". */
export function dueText(card: Pick<BrowsedCard, "due" | "is_due" | "suspended">, now: number = Date.now()): string {
  if (card.suspended) return "Suspended";
  if (card.due === null) return "Not studied yet";
  if (card.is_due) return "Due now";
  const due = Date.parse(card.due);
  if (Number.isNaN(due)) return "";
  return due <= now ? "Due now" : `Due in ${describeInterval((due - now) / 1000)}`;
}

/** A probability of recall as a whole percentage, or a dash for a card never studied. */
export function recallText(probability: number | null): string {
  return probability === null ? "—" : `${Math.round(probability * 100)} %`;
}

export function recallLabel(probability: number | null): string {
  return probability === null ? "no recall estimate yet" : `${Math.round(probability * 100)} percent chance of recall now`;
}

const RATINGS = ["", "Again", "Hard", "Good", "Easy"];

export function ratingName(rating: number): string {
  return RATINGS[rating] ?? String(rating);
}

/** A number of days as the history table writes it: "10 min", "3 d", "2.5 mo". */
export function daysText(days: number | null): string {
  return days === null || days <= 0 ? "—" : describeInterval(days * 86_400);
}

/** The summary line above the results: "12 cards", "12 cards match". */
export function countText(count: number, searching: boolean): string {
  const cards = `${count} ${count === 1 ? "card" : "cards"}`;
  return searching ? `${cards} ${count === 1 ? "matches" : "match"}` : cards;
}

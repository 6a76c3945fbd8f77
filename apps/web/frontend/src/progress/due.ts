/** What is due in each deck, and in all of them together, for the study overview. */

export interface DeckDue {
  slug: string;
  title: string;
  course: string;
  cardCount: number;
  /** Null when the deck's counts could not be loaded. */
  counts: { learning: number; review: number; new: number } | null;
}

export function deckDue(deck: DeckDue): number {
  return deck.counts === null ? 0 : deck.counts.learning + deck.counts.review + deck.counts.new;
}

export function totalDue(decks: DeckDue[]): number {
  return decks.reduce((sum, deck) => sum + deckDue(deck), 0);
}

/** Decks with something due first, most due first; the others keep the course's order. */
export function byDue(decks: DeckDue[]): DeckDue[] {
  return decks
    .map((deck, index) => ({ deck, index }))
    .sort((a, b) => deckDue(b.deck) - deckDue(a.deck) || a.index - b.index)
    .map(({ deck }) => deck);
}

/** The words after the big total at the top of the page (the total itself only when something is due). */
export function dueHeadline(decks: DeckDue[]): string {
  const total = totalDue(decks);
  if (decks.length === 0) return "No decks are published yet.";
  if (total === 0) return "Nothing is due right now. Well done.";
  const withDue = decks.filter((deck) => deckDue(deck) > 0).length;
  return `${total === 1 ? "card" : "cards"} to study now, in ${withDue} ${withDue === 1 ? "deck" : "decks"}.`;
}

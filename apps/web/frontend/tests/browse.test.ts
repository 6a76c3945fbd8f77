import { describe, expect, it } from "vitest";
import {
  countText,
  daysText,
  dueText,
  EMPTY_SEARCH,
  ratingName,
  recallText,
  searchFromQuery,
  searchParams,
  searchToQuery,
} from "../src/browse/logic";
import { formatMoment } from "../src/format";

describe("the search in the address", () => {
  it("round-trips every field and leaves the defaults out", () => {
    const search = { q: "shuffle buffer", state: "due" as const, concept: "shuffling", deck: "tf-data", order: "lapses" as const };
    const query = searchToQuery(search);
    expect(query).toBe("?q=shuffle+buffer&state=due&concept=shuffling&deck=tf-data&order=lapses");
    expect(searchFromQuery(new URLSearchParams(query))).toEqual(search);
    expect(searchToQuery(EMPTY_SEARCH)).toBe("");
    expect(searchToQuery({ ...EMPTY_SEARCH, q: "   " })).toBe("");
  });

  it("reads an unknown state or order as the default instead of asking the API for it", () => {
    expect(searchFromQuery(new URLSearchParams("state=forgotten&order=random&q=x"))).toEqual({ ...EMPTY_SEARCH, q: "x" });
  });

  it("asks the API only for what is set, the text trimmed", () => {
    expect(searchParams({ ...EMPTY_SEARCH, q: " map " }, 2, 50)).toEqual({ page: 2, page_size: 50, q: "map" });
    expect(searchParams({ ...EMPTY_SEARCH, state: "new", order: "due" }, 1, 50)).toEqual({
      page: 1,
      page_size: 50,
      state: "new",
      order: "due",
    });
  });
});

describe("a card's state in words", () => {
  const now = Date.parse("2026-12-06T12:00:00Z");
  it("says when it comes back", () => {
    expect(dueText({ due: null, is_due: false, suspended: false }, now)).toBe("Not studied yet");
    expect(dueText({ due: "2026-12-06T11:00:00Z", is_due: true, suspended: false }, now)).toBe("Due now");
    expect(dueText({ due: "2026-12-09T12:00:00Z", is_due: false, suspended: false }, now)).toBe("Due in 3 days");
    expect(dueText({ due: "2026-12-01T12:00:00Z", is_due: false, suspended: true }, now)).toBe("Suspended");
  });

  it("writes recall, ratings, intervals and counts", () => {
    expect(recallText(null)).toBe("—");
    expect(recallText(0.874)).toBe("87 %");
    expect([1, 2, 3, 4].map(ratingName)).toEqual(["Again", "Hard", "Good", "Easy"]);
    expect(daysText(0)).toBe("—");
    expect(daysText(null)).toBe("—");
    expect(daysText(10 / 1440)).toBe("10 minutes");
    expect(daysText(3)).toBe("3 days");
    expect(countText(1, true)).toBe("1 card matches");
    expect(countText(12, true)).toBe("12 cards match");
    expect(countText(12, false)).toBe("12 cards");
  });
});

describe("formatMoment", () => {
  it("writes every moment one way, and leaves what is not a time as it came", () => {
    expect(formatMoment("2026-12-06T14:05:00Z", "en-GB")).toMatch(/^6 Dec 2026, \d{2}:05$/);
    expect(formatMoment("not a time")).toBe("not a time");
  });
});

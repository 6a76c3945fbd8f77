import { describe, expect, it } from "vitest";
import { describeInterval, formatInterval } from "../src/format";

describe("formatInterval", () => {
  it.each([
    [30, "30 s"],
    [60, "1 min"],
    [600, "10 min"],
    [330, "6 min"],
    [3 * 3600, "3 h"],
    [3 * 86400, "3 d"],
    [691200, "8 d"],
    [60 * 86400, "2 mo"],
    [45 * 86400, "1.5 mo"],
    [400 * 86400, "1.1 y"],
  ])("%i seconds is %s", (seconds, label) => {
    expect(formatInterval(seconds)).toBe(label);
  });

  it("spells intervals out for screen readers", () => {
    expect(describeInterval(600)).toBe("10 minutes");
    expect(describeInterval(86400)).toBe("1 day");
  });
});

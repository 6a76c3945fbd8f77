import { describe, expect, it } from "vitest";
import {
  adviceText,
  changed,
  exportFileName,
  hourLabel,
  initialTimeZone,
  numberOrRaw,
  timeZoneNames,
  type Advice,
} from "../src/account/settings";

describe("timeZoneNames", () => {
  it("keeps the saved zone and UTC even when the browser does not list them, sorted and once each", () => {
    expect(timeZoneNames(["Europe/Paris", "America/New_York"], ["UTC", "Europe/Paris", ""])).toEqual([
      "America/New_York",
      "Europe/Paris",
      "UTC",
    ]);
  });
});

describe("initialTimeZone", () => {
  it("offers the browser's zone while the learner never saved a setting and the server has its default", () => {
    expect(initialTimeZone("UTC", false, "Europe/Paris")).toBe("Europe/Paris");
  });

  it("keeps a zone the learner saved, even UTC", () => {
    expect(initialTimeZone("UTC", true, "Europe/Paris")).toBe("UTC");
    expect(initialTimeZone("Asia/Tokyo", false, "Europe/Paris")).toBe("Asia/Tokyo");
  });

  it("keeps the saved zone when the browser does not say its own", () => {
    expect(initialTimeZone("UTC", false, null)).toBe("UTC");
  });
});

describe("numberOrRaw", () => {
  it.each([
    ["0.9", 0.9],
    [" 20 ", 20],
    ["", ""],
    ["abc", "abc"],
    ["1e400", "1e400"],
  ])("%j is sent as %j", (text, sent) => {
    expect(numberOrRaw(text)).toBe(sent);
  });
});

describe("changed", () => {
  it("keeps only the values that differ from the saved ones", () => {
    expect(changed({ a: 1, b: "x", c: true }, { a: 1, b: "y", c: false })).toEqual({ b: "y", c: false });
    expect(changed({ a: 1 }, { a: 1 })).toEqual({});
  });
});

describe("hourLabel", () => {
  it("pads the hour", () => {
    expect(hourLabel(7)).toBe("07:00");
    expect(hourLabel(23)).toBe("23:00");
  });
});

describe("adviceText", () => {
  const ready: Advice = {
    status: "ready",
    advised_retention: 0.86,
    advised: { reviews_per_day: 40, minutes_per_day: 8.2 },
    current: { reviews_per_day: 60, minutes_per_day: 12.4 },
  };

  it("says nothing while the advice is computed", () => {
    expect(adviceText({ status: "computing", advised_retention: null, advised: null, current: null }, 0.9)).toBeNull();
  });

  it("compares the advised workload with the learner's", () => {
    const text = adviceText(ready, 0.9) ?? "";
    expect(text).toContain("0.86 would cost the least study time");
    expect(text).toContain("about 8.2 minutes of study a day, against about 12 minutes at your 0.90");
  });

  it("compares reviews where the two workloads take the same minutes", () => {
    const light: Advice = {
      ...ready,
      advised_retention: 0.7,
      advised: { reviews_per_day: 3.2, minutes_per_day: 1.02 },
      current: { reviews_per_day: 6.9, minutes_per_day: 0.98 },
    };
    const text = adviceText(light, 0.9) ?? "";
    expect(text).not.toContain("about 1 minute of study a day, against about 1 minute");
    expect(text).toContain("about 3 reviews a day, against 7 at your 0.90, the same study time");
  });

  it("says when the learner's setting is already the advised one", () => {
    expect(adviceText(ready, 0.86)).toContain("already costs the least");
  });

  it("says when the advice failed", () => {
    expect(adviceText({ ...ready, status: "failed" }, 0.9)).toContain("could not be worked out");
  });
});

describe("exportFileName", () => {
  it("is safe whatever the username", () => {
    expect(exportFileName("ada lovelace/../x", new Date("2025-03-05T10:00:00Z"))).toBe(
      "quizsite-ada-lovelace-x-2025-03-05.json",
    );
    expect(exportFileName("///", new Date("2025-03-05T10:00:00Z"))).toBe("quizsite-account-2025-03-05.json");
  });
});

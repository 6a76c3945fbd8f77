import { describe, expect, it } from "vitest";
import { deviceName } from "../src/account/device";

describe("deviceName", () => {
  it("names the browser and the system a sign-in comes from", () => {
    const chrome =
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
    expect(deviceName(chrome)).toBe("Chrome on Linux");
    const iphone =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1";
    expect(deviceName(iphone)).toBe("Safari on iOS");
    const pixel =
      "Mozilla/5.0 (Linux; Android 15; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36";
    expect(deviceName(pixel)).toBe("Chrome on Android");
    expect(deviceName("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0")).toBe(
      "Firefox on Windows",
    );
    const edge =
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36 Edg/156.0.0.0";
    expect(deviceName(edge)).toBe("Edge on macOS");
  });

  it("says only what it can tell", () => {
    expect(deviceName("curl/8.0")).toBe("Web browser");
  });
});

import { describe, expect, it } from "vitest";
import { ApiProblem, describeError, fieldErrors, NetworkProblem, parseRetryAfter } from "../src/api/errors";

const body = (code: string, message: string, fields: Record<string, string[]> = {}) => ({
  error: { code, message, fields },
});

describe("describeError", () => {
  it("uses the server's message for the error shape", () => {
    const error = new ApiProblem(400, body("invalid_credentials", "Unable to sign in with that email and password."), null);
    expect(describeError(error)).toBe("Unable to sign in with that email and password.");
  });

  it("adds field messages the server's message does not already hold", () => {
    const error = new ApiProblem(400, body("invalid", "The account was not created", { email: ["Enter a valid email address."] }), null);
    expect(describeError(error)).toBe("The account was not created. Enter a valid email address.");
  });

  it("does not repeat field messages already in the message", () => {
    const error = new ApiProblem(
      400,
      body("invalid", "The account was not created: email: Enter a valid email address.", { email: ["Enter a valid email address."] }),
      null,
    );
    expect(describeError(error)).toBe("The account was not created: email: Enter a valid email address.");
  });

  it("explains a network failure", () => {
    expect(describeError(new TypeError("Failed to fetch"))).toMatch(/Could not reach the server/);
    expect(describeError(new NetworkProblem())).toMatch(/Could not reach the server/);
  });

  it("never shows a 5xx body, even an HTML one", () => {
    const message = describeError(new ApiProblem(502, "<html>Bad gateway</html>", null));
    expect(message).toBe("Something went wrong on the server. Please try again in a moment.");
    expect(describeError(new ApiProblem(500, body("server_error", "Traceback..."), null))).not.toMatch(/Traceback/);
  });

  it("says how long to wait after a 429", () => {
    expect(describeError(new ApiProblem(429, body("throttled", "Request was throttled."), "30"))).toBe(
      "Too many requests for now. Please try again in 30 seconds.",
    );
    expect(describeError(new ApiProblem(429, body("throttled", "x"), "120"))).toMatch(/in 2 minutes\.$/);
    expect(describeError(new ApiProblem(429, body("throttled", "x"), null))).toMatch(/try again shortly/);
  });

  it("treats sync_in_progress as a wait, with its Retry-After", () => {
    expect(describeError(new ApiProblem(409, body("sync_in_progress", "busy"), "1"))).toBe(
      "Your other reviews are still being saved. Please try again in 1 second.",
    );
  });

  it("has a sentence for a body that is not the error shape", () => {
    expect(describeError(new ApiProblem(418, { detail: "teapot" }, null))).toBe("The request was refused (HTTP 418). Please try again.");
    expect(describeError(new ApiProblem(404, "", null))).toBe("That page or item was not found.");
  });

  it("has a sentence for anything else", () => {
    expect(describeError(new Error("boom"))).toMatch(/Something unexpected went wrong/);
    expect(describeError(undefined)).toMatch(/Something unexpected went wrong/);
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates", () => {
    expect(parseRetryAfter("5")).toBe(5);
    expect(parseRetryAfter("0")).toBe(1);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now)).toBe(60);
    expect(parseRetryAfter("soon")).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });
});

describe("fieldErrors", () => {
  it("gives one field's messages", () => {
    const error = new ApiProblem(400, body("invalid", "x", { password: ["Too short."] }), null);
    expect(fieldErrors(error, "password")).toEqual(["Too short."]);
    expect(fieldErrors(error, "email")).toEqual([]);
    expect(fieldErrors(new TypeError(), "email")).toEqual([]);
  });
});

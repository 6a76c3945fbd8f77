/** Sending one review; the payload carries its own time so a resend is the same review. */
import { call, client } from "./api/client";
import type { components } from "./api/schema";

export type ReviewPayload = components["schemas"]["ReviewInputRequest"];
export type ReviewResult = components["schemas"]["ReviewOutput"];

export function makeReview(
  card: number,
  answer: { rating: 1 | 2 | 3 | 4 } | { knew: boolean },
  durationMs: number,
  now: Date = new Date(),
): ReviewPayload {
  return {
    card,
    ...answer,
    duration_ms: Math.max(0, Math.min(86_400_000, Math.round(durationMs))),
    reviewed_at: now.toISOString(),
    client_review_id: crypto.randomUUID(),
  } as ReviewPayload;
}

export function postReview(review: ReviewPayload): Promise<ReviewResult> {
  return call(client.POST("/api/v1/reviews/", { body: review }));
}

export function undoReview(reviewId: number): Promise<ReviewResult> {
  return call(client.POST("/api/v1/reviews/{review_id}/undo/", { params: { path: { review_id: reviewId } } }));
}

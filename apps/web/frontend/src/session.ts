/** Who is signed in: the stored token and the account it belongs to. */
import { useEffect, useState } from "preact/hooks";
import { call, client, onUnauthorized, readToken, writeToken } from "./api/client";
import type { components } from "./api/schema";
import { describeError, NetworkProblem } from "./api/errors";
import { forgetKeptStudies } from "./offline/keptStudy";
import { navigate } from "./router";

export type Me = components["schemas"]["MeOutput"];

export type Session =
  | { status: "loading" }
  | { status: "signed-out" }
  | { status: "signed-in"; me: Me }
  | { status: "error"; message: string };

let session: Session = readToken() === null ? { status: "signed-out" } : { status: "loading" };
const listeners = new Set<() => void>();

// The account as last loaded, so the app can start signed in without a connection; forgotten with the token.
const ME_KEY = "quizsite.me";

function rememberedMe(): Me | null {
  try {
    const stored = localStorage.getItem(ME_KEY);
    return stored === null ? null : (JSON.parse(stored) as Me);
  } catch {
    return null;
  }
}

function remember(me: Me | null): void {
  try {
    if (me === null) localStorage.removeItem(ME_KEY);
    else localStorage.setItem(ME_KEY, JSON.stringify(me));
  } catch {
    // Not kept: the next start without a connection says so instead.
  }
}

function set(next: Session): void {
  session = next;
  if (next.status === "signed-in") remember(next.me);
  else if (next.status === "signed-out") {
    remember(null);
    forgetKeptStudies();
  }
  for (const listener of listeners) listener();
}

export function getSession(): Session {
  return session;
}

export function useSession(): Session {
  const [value, setValue] = useState(session);
  useEffect(() => {
    const update = () => setValue(session);
    listeners.add(update);
    update();
    return () => {
      listeners.delete(update);
    };
  }, []);
  return value;
}

/** Loads the account for the stored token; a refused token signs the learner out. */
export async function loadSession(): Promise<void> {
  if (readToken() === null) {
    set({ status: "signed-out" });
    return;
  }
  try {
    const me = await call(client.GET("/api/v1/me/"));
    set({ status: "signed-in", me });
  } catch (error) {
    const remembered = error instanceof NetworkProblem ? rememberedMe() : null;
    if (readToken() === null) set({ status: "signed-out" });
    else if (remembered !== null) {
      set({ status: "signed-in", me: remembered });
      // Asked again once the connection is back, for anything that changed meanwhile.
      window.addEventListener("online", () => void loadSession(), { once: true });
    } else set({ status: "error", message: describeError(error) });
  }
}

export async function signInWithToken(token: string): Promise<void> {
  writeToken(token);
  set({ status: "loading" });
  await loadSession();
}

export function setMe(me: Me): void {
  set({ status: "signed-in", me });
}

// What the sign-in page says once, after the learner left on purpose (signed out, or deleted the account).
let farewell: string | null = null;

function sayFarewell(words: string): void {
  farewell = words;
}

/** The words for the sign-in page, once: later visits say nothing. */
export function takeFarewell(): string | null {
  const words = farewell;
  farewell = null;
  return words;
}

/** Signs out every device: this one is forgotten here, the others' tokens stop working. */
export async function signOutEverywhere(): Promise<void> {
  await call(client.POST("/api/v1/auth/logout/everywhere/"));
  leaveForSignIn("Every device is signed out.");
}

export async function signOut(): Promise<void> {
  try {
    await call(client.POST("/api/v1/auth/logout/"));
  } catch {
    // The token is forgotten here either way; a failed logout only leaves it valid on the server.
  }
  leaveForSignIn("You are signed out on this device.");
}

/**
 * Forgets the token here and shows the sign-in page with a farewell, after the learner left on purpose.
 *
 * The new path and the signed-out session are set in one tick, so they render together: a signed-out render of
 * the page being left would send the learner to sign in with that page as `next`, for whoever signs in after.
 */
export function leaveForSignIn(words: string): void {
  writeToken(null);
  sayFarewell(words);
  navigate("/signin", { replace: true });
  set({ status: "signed-out" });
}

onUnauthorized(() => {
  writeToken(null);
  set({ status: "signed-out" });
});

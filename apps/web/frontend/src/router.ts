/** Path matching and navigation over the History API; the server serves the shell for every route. */
import { useEffect, useState } from "preact/hooks";

export type Params = Record<string, string>;

export interface Route {
  pattern: string;
  name: string;
  /** Signed-out visitors may see it. */
  public?: boolean;
}

export const routes: Route[] = [
  { pattern: "/", name: "home" },
  { pattern: "/signin", name: "signin", public: true },
  { pattern: "/signup", name: "signup", public: true },
  { pattern: "/forgot-password", name: "forgot-password", public: true },
  { pattern: "/reset-password", name: "reset-password", public: true },
  { pattern: "/confirm-email", name: "confirm-email", public: true },
  { pattern: "/unsubscribed", name: "unsubscribed", public: true },
  { pattern: "/settings", name: "settings" },
  { pattern: "/progress", name: "progress" },
  { pattern: "/study", name: "study" },
  { pattern: "/lessons/:slug", name: "lesson" },
  { pattern: "/decks/:slug/study", name: "deck-study" },
  { pattern: "/decks/:slug/match", name: "deck-match" },
  { pattern: "/quizzes/:slug", name: "quiz" },
  { pattern: "/quiz-attempts/:id", name: "quiz-attempt" },
  { pattern: "/exercises/:slug", name: "exercise" },
  { pattern: "/courses/:slug/constellation", name: "constellation" },
  { pattern: "/courses/:slug/cards", name: "card-browser" },
  { pattern: "/cards/:id", name: "card" },
  { pattern: "/explorer/:slug", name: "explorer" },
];

export interface Match {
  route: Route | null;
  params: Params;
}

export function matchPath(path: string): Match {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  const parts = trimmed.split("/");
  for (const route of routes) {
    const want = route.pattern.split("/");
    if (want.length !== parts.length) continue;
    const params: Params = {};
    let ok = true;
    for (let i = 0; i < want.length; i++) {
      const w = want[i] ?? "";
      const p = parts[i] ?? "";
      if (w.startsWith(":")) {
        if (p === "") {
          ok = false;
          break;
        }
        try {
          params[w.slice(1)] = decodeURIComponent(p);
        } catch {
          ok = false;
          break;
        }
      } else if (w !== p) {
        ok = false;
        break;
      }
    }
    if (ok) return { route, params };
  }
  return { route: null, params: {} };
}

/** Only same-site paths are followed after sign-in, so a crafted link cannot send anyone away. */
export function safeNext(next: string | null): string {
  if (next === null || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  return next;
}

const listeners = new Set<() => void>();
let titleFocusPending = false;

/** True once after each in-app navigation: the new page's heading should take focus. */
export function takeTitleFocus(): boolean {
  const pending = titleFocusPending;
  titleFocusPending = false;
  return pending;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  titleFocusPending = true;
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const listener of listeners) listener();
}

export interface Location {
  path: string;
  search: URLSearchParams;
  full: string;
}

function current(): Location {
  return {
    path: location.pathname,
    search: new URLSearchParams(location.search),
    full: location.pathname + location.search,
  };
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return loc;
}

/** Same-origin link clicks become History navigations; modified clicks open as the browser would. */
export function interceptLinks(root: HTMLElement): void {
  root.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor || anchor.target || anchor.hasAttribute("download")) return;
    const url = new URL(anchor.href, location.href);
    if (url.origin !== location.origin || url.pathname.startsWith("/api/") || url.pathname.startsWith("/admin")) return;
    if (matchPath(url.pathname).route === null) return;
    // A link to a place on this very page (a lesson's contents): the browser scrolls to it and keeps the hash.
    if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
    event.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
}

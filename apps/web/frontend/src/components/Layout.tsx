/** The frame of every page: skip link, header with navigation and account, main, footer. */
import type { ComponentChildren } from "preact";
import { SyncBadge } from "../offline/SyncBadge";
import { signOut, type Session } from "../session";

const NAV = [
  { href: "/", label: "Home" },
  { href: "/study", label: "Study" },
  { href: "/progress", label: "Progress" },
  { href: "/settings", label: "Settings" },
];

function isCurrent(href: string, path: string): boolean {
  return href === "/" ? path === "/" : path === href || path.startsWith(`${href}/`);
}

export function Layout({ session, path, children }: { session: Session; path: string; children: ComponentChildren }) {
  const signedIn = session.status === "signed-in";
  const me = signedIn ? session.me : null;
  const who = me ? me.display_name || me.email || me.username : "";
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="site-header">
        <div class="header-inner">
          <a class="brand" href="/">
            Quizsite
          </a>
          {signedIn && (
            <nav aria-label="Main">
              <ul class="nav-list">
                {NAV.map((item) => (
                  <li key={item.href}>
                    <a href={item.href} aria-current={isCurrent(item.href, path) ? "page" : undefined}>
                      {item.label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {me && <SyncBadge owner={me.id} />}
          <div class="account">
            {me ? (
              <>
                <span class="who" title={me.email}>
                  {who}
                </span>
                <button
                  type="button"
                  class="button link-button"
                  onClick={() => void signOut()}
                >
                  Sign out
                </button>
              </>
            ) : (
              <a href="/signin">Sign in</a>
            )}
          </div>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
      <footer class="site-footer">
        <p>Quizsite: learn it, then remember it.</p>
      </footer>
    </>
  );
}

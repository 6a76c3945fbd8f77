/**
 * Light or dark: the device's setting unless the learner chose one. The choice is kept on this
 * device (a phone read in bed and a desktop at work may want different ones) and shown through
 * html[data-theme], which app.css reads; "system" leaves the attribute off and the media query decides.
 */
export type ThemeChoice = "system" | "light" | "dark";
export type ThemeShown = "light" | "dark";

export const THEME_CHOICES: readonly { value: ThemeChoice; label: string }[] = [
  { value: "system", label: "As this device is set" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

const KEY = "quizsite.theme";
const CHANGED = "quizsite:theme";
const DARK_QUERY = "(prefers-color-scheme: dark)";

export function themeChoiceParse(stored: string | null): ThemeChoice {
  return stored === "light" || stored === "dark" ? stored : "system";
}

export function themeChoice(): ThemeChoice {
  try {
    return themeChoiceParse(localStorage.getItem(KEY));
  } catch {
    // Storage refused (a private window's quota, a blocked origin): the device's setting it is.
    return "system";
  }
}

export function themeApply(choice: ThemeChoice): void {
  const root = document.documentElement;
  if (choice === "system") delete root.dataset.theme;
  else root.dataset.theme = choice;
}

export function themeChoose(choice: ThemeChoice): void {
  try {
    if (choice === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    // Not kept, but still shown until the page is left.
  }
  themeApply(choice);
  window.dispatchEvent(new Event(CHANGED));
}

export function themeShown(choice: ThemeChoice, systemDark: boolean): ThemeShown {
  if (choice !== "system") return choice;
  return systemDark ? "dark" : "light";
}

export function themeShownNow(): ThemeShown {
  return themeShown(themeChoice(), matchMedia(DARK_QUERY).matches);
}

/** Applies the stored choice now and whenever another tab of this app changes it. */
export function themeKeepInStep(): void {
  themeApply(themeChoice());
  window.addEventListener("storage", (event) => {
    if (event.key !== KEY && event.key !== null) return;
    themeApply(themeChoice());
    window.dispatchEvent(new Event(CHANGED));
  });
}

/** Calls `listener` whenever what is shown may have changed: a choice (here or in another tab) or the device's setting. */
export function onThemeChange(listener: () => void): () => void {
  const media = matchMedia(DARK_QUERY);
  media.addEventListener("change", listener);
  window.addEventListener(CHANGED, listener);
  return () => {
    media.removeEventListener("change", listener);
    window.removeEventListener(CHANGED, listener);
  };
}

/**
 * A colour custom property as the browser resolves it now, for drawing on a canvas: the property's
 * own value is the unresolved light-dark() pair, so it is read back through an element's colour.
 */
export function resolvedColour(host: Element, property: string): string {
  const probe = document.createElement("span");
  probe.hidden = true;
  probe.style.color = `var(${property})`;
  host.appendChild(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour;
}

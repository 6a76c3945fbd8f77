/** Entry point: mounts the app into the shell's #app. */
import { render } from "preact";
import { App } from "./App";
import { interceptLinks } from "./router";
import { loadSession } from "./session";
import { themeKeepInStep } from "./theme";

const root = document.getElementById("app");
themeKeepInStep();
if (root) {
  interceptLinks(root);
  void loadSession();
  render(<App />, root);
}
// Keeps the shell and the bundle, so a reload without a connection still starts the app. A browser
// that refuses (a private window, an http origin other than localhost) runs the app as before.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch(() => undefined);
}

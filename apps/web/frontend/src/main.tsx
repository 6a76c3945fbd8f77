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

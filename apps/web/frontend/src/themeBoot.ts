/** Loaded before the style sheet, as a classic script: a chosen theme is on the page before its first paint. */
import { themeApply, themeChoice } from "./theme";

themeApply(themeChoice());

/** Light or dark, chosen for this device: applied at once, no save button, nothing sent to the server. */
import { useState } from "preact/hooks";
import { useThemeShown } from "../hooks";
import { THEME_CHOICES, themeChoice, themeChoose, type ThemeChoice } from "../theme";
import { Section } from "./Section";

export function AppearanceSection() {
  const [choice, setChoice] = useState<ThemeChoice>(themeChoice);
  const shown = useThemeShown();
  const choose = (next: ThemeChoice) => {
    themeChoose(next);
    setChoice(next);
  };
  return (
    <Section id="appearance" title="Appearance">
      <fieldset class="theme-choice">
        <legend>Colours on this device</legend>
        {THEME_CHOICES.map((option) => (
          <label key={option.value}>
            <input
              type="radio"
              name="theme"
              value={option.value}
              checked={choice === option.value}
              onChange={() => choose(option.value)}
            />{" "}
            {option.label}
          </label>
        ))}
      </fieldset>
      <p class="hint" aria-live="polite">
        {choice === "system" ? `This device is set to ${shown}, so the app is ${shown}.` : `The app is ${shown} on this device.`}
      </p>
    </Section>
  );
}

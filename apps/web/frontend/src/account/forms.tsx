/** The profile, reminder and password forms of the settings page. */
import { useState } from "preact/hooks";
import { call, client, writeToken } from "../api/client";
import { fieldErrors } from "../api/errors";
import { Check, Field, Select } from "../components/Field";
import { setMe, type Me } from "../session";
import { Section } from "./Section";
import { SaveStatus, useSave } from "./fields";
import { HOUR_OPTIONS, changed, hourLabel, numberOrRaw } from "./settings";

export function ProfileForm({ me }: { me: Me }) {
  const [saved, setSaved] = useState(me);
  const [displayName, setDisplayName] = useState(me.display_name);
  const [leaderboards, setLeaderboards] = useState(me.show_on_leaderboards);
  const save = useSave();
  return (
    <Section id="profile" title="Profile">
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save.run(async () => {
            const body = changed(
              { display_name: saved.display_name, show_on_leaderboards: saved.show_on_leaderboards },
              { display_name: displayName, show_on_leaderboards: leaderboards },
            );
            if (Object.keys(body).length === 0) return "Nothing to save: the profile is as it was.";
            const next = await call(client.PATCH("/api/v1/me/", { body }));
            setSaved(next);
            setMe(next);
            return "Profile saved.";
          });
        }}
      >
        <p class="meta">
          Signed in as {me.username}
          {me.email && me.email !== me.username && <> ({me.email})</>}.
        </p>
        <Field
          id="display_name"
          name="display_name"
          required={false}
          label="Display name"
          hint="Shown on leaderboards instead of your username."
          value={displayName}
          onInput={setDisplayName}
          autoComplete="nickname"
          errors={fieldErrors(save.error, "display_name")}
        />
        <Check
          id="show_on_leaderboards"
          label="Show me on leaderboards"
          hint="Under your display name, which must then be set."
          checked={leaderboards}
          onChange={setLeaderboards}
          errors={fieldErrors(save.error, "show_on_leaderboards")}
        />
        <button type="submit" class="button primary" disabled={save.busy}>
          {save.busy ? "Saving…" : "Save profile"}
        </button>
        <SaveStatus save={save} inline={["display_name", "show_on_leaderboards"]} />
      </form>
    </Section>
  );
}

export function RemindersForm({ me, timezone }: { me: Me; timezone: string }) {
  const [enabled, setEnabled] = useState(me.email_settings.review_reminders);
  const [hour, setHour] = useState(String(me.email_settings.reminder_hour));
  const save = useSave();
  return (
    <Section id="reminders" title="Review reminders">
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save.run(async () => {
            const next = await call(
              client.PATCH("/api/v1/me/", {
                body: { email_settings: { review_reminders: enabled, reminder_hour: numberOrRaw(hour) as number } },
              }),
            );
            setMe(next);
            return next.email_settings.review_reminders
              ? `Saved. A reminder is emailed at ${hourLabel(next.email_settings.reminder_hour)} when cards are due.`
              : "Saved. No reminder emails will be sent.";
          });
        }}
      >
        <Check
          id="review_reminders"
          label="Email me when cards are due"
          checked={enabled}
          onChange={setEnabled}
          errors={fieldErrors(save.error, "email_settings.review_reminders")}
        />
        <Select
          id="reminder_hour"
          label="Send it at"
          hint={`In your time zone (${timezone}).`}
          value={hour}
          options={HOUR_OPTIONS}
          onChange={setHour}
          errors={fieldErrors(save.error, "email_settings.reminder_hour")}
        />
        <button type="submit" class="button primary" disabled={save.busy}>
          {save.busy ? "Saving…" : "Save reminders"}
        </button>
        <SaveStatus save={save} inline={["email_settings.review_reminders", "email_settings.reminder_hour"]} />
      </form>
    </Section>
  );
}

export function PasswordForm() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const save = useSave();
  return (
    <Section id="password" title="Password">
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save.run(async () => {
            const { token } = await call(
              client.POST("/api/v1/auth/password/change/", {
                body: { current_password: current, new_password: next },
              }),
            );
            writeToken(token);
            setCurrent("");
            setNext("");
            return "Password changed. Your other devices are signed out.";
          });
        }}
      >
        <Field
          id="current_password"
          name="current_password"
          required={false}
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={current}
          onInput={setCurrent}
          errors={fieldErrors(save.error, "current_password")}
        />
        <Field
          id="new_password"
          name="new_password"
          required={false}
          label="New password"
          type="password"
          autoComplete="new-password"
          value={next}
          onInput={setNext}
          errors={fieldErrors(save.error, "new_password")}
        />
        <button type="submit" class="button primary" disabled={save.busy}>
          {save.busy ? "Changing…" : "Change password"}
        </button>
        <SaveStatus save={save} inline={["current_password", "new_password"]} />
      </form>
    </Section>
  );
}

/** The learner's settings: profile, scheduling (with the retention advice), reminders, password, their data. */
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { call, client, writeToken } from "../api/client";
import { describeError, fieldErrors } from "../api/errors";
import type { components } from "../api/schema";
import { SaveStatus, useSave } from "../account/fields";
import { Check, Field, Select } from "../components/Field";
import {
  adviceText,
  browserTimeZone,
  browserTimeZones,
  changed,
  exportFileName,
  hourLabel,
  initialTimeZone,
  numberOrRaw,
  timeZoneNames,
} from "../account/settings";
import { Await, ErrorMessage, PageTitle } from "../components/common";
import { useLoad, usePolling, useTitle } from "../hooks";
import { navigate } from "../router";
import { loadSession, setMe, signOutEverywhere, type Me } from "../session";

type S = components["schemas"];
type Scheduling = S["SchedulingSettingsOutput"];
type SchedulingPatch = S["PatchedSchedulingSettingsInputRequest"];
type Device = S["DeviceOutput"];

const HOURS = Array.from({ length: 24 }, (_, hour) => ({ value: String(hour), label: hourLabel(hour) }));
const ADVICE_POLLS = 5;
const ADVICE_POLL_MS = 4000;

async function loadSettings(): Promise<{ me: Me; scheduling: Scheduling }> {
  const [me, scheduling] = await Promise.all([
    call(client.GET("/api/v1/me/")),
    call(client.GET("/api/v1/srs/settings/")),
  ]);
  return { me, scheduling };
}

export default function Settings() {
  useTitle("Settings");
  const [value, retry] = useLoad(loadSettings, []);
  return (
    <div class="settings">
      <PageTitle>Settings</PageTitle>
      <Await value={value} retry={retry}>
        {({ me, scheduling }) => (
          <>
            <ProfileForm me={me} />
            <SchedulingForm initial={scheduling} />
            <RemindersForm me={me} timezone={scheduling.timezone} />
            <PasswordForm />
            <DevicesSection />
            <DataSection me={me} />
          </>
        )}
      </Await>
    </div>
  );
}

function Section({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="card settings-section" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </section>
  );
}

function ProfileForm({ me }: { me: Me }) {
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
          {me.email && <> ({me.email})</>}.
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
        <SaveStatus save={save} />
      </form>
    </Section>
  );
}

interface ScheduleDraft {
  timezone: string;
  day_start_hour: string;
  desired_retention: string;
  new_cards_per_day: string;
  max_reviews_per_day: string;
  maximum_interval_days: string;
  leech_threshold: string;
  suspend_leeches: boolean;
  load_balancing: boolean;
  auto_optimize: boolean;
}

function draftOf(settings: Scheduling, timezone: string): ScheduleDraft {
  return {
    timezone,
    day_start_hour: String(settings.day_start_hour),
    desired_retention: settings.desired_retention.toFixed(2),
    new_cards_per_day: String(settings.new_cards_per_day),
    max_reviews_per_day: String(settings.max_reviews_per_day),
    maximum_interval_days: String(settings.maximum_interval_days),
    leech_threshold: String(settings.leech_threshold),
    suspend_leeches: settings.suspend_leeches,
    load_balancing: settings.load_balancing,
    auto_optimize: settings.auto_optimize,
  };
}

/** The request body: only the settings whose value differs from the saved one. */
function patchOf(saved: Scheduling, draft: ScheduleDraft): Record<string, unknown> {
  const edited: Record<string, unknown> = {
    timezone: draft.timezone.trim(),
    day_start_hour: numberOrRaw(draft.day_start_hour),
    desired_retention: numberOrRaw(draft.desired_retention),
    new_cards_per_day: numberOrRaw(draft.new_cards_per_day),
    max_reviews_per_day: numberOrRaw(draft.max_reviews_per_day),
    maximum_interval_days: numberOrRaw(draft.maximum_interval_days),
    leech_threshold: numberOrRaw(draft.leech_threshold),
    suspend_leeches: draft.suspend_leeches,
    load_balancing: draft.load_balancing,
    auto_optimize: draft.auto_optimize,
  };
  return changed(saved as unknown as Record<string, unknown>, edited);
}

function SchedulingForm({ initial }: { initial: Scheduling }) {
  const browser = useMemo(browserTimeZone, []);
  const [saved, setSaved] = useState(initial);
  const [draft, setDraft] = useState(() =>
    draftOf(initial, initialTimeZone(initial.timezone, initial.updated_at !== null, browser)),
  );
  const [advice, setAdvice] = useState(initial.retention_advice);
  const zones = useMemo(
    () => timeZoneNames(browserTimeZones(), ["UTC", initial.timezone, browser ?? ""]),
    [initial.timezone, browser],
  );
  const save = useSave();
  const set = <K extends keyof ScheduleDraft>(key: K) => (value: ScheduleDraft[K]) =>
    setDraft((d) => ({ ...d, [key]: value }));
  const errors = (name: string) => fieldErrors(save.error, name);

  // The advice is worked out on the server's workers: ask again a few times while it is being computed.
  usePolling(advice.status === "computing", () => call(client.GET("/api/v1/srs/settings/")), {
    delay: () => ADVICE_POLL_MS,
    onAnswer: (fresh, asked) => {
      const done = fresh.retention_advice.status !== "computing" || asked >= ADVICE_POLLS;
      if (done) setAdvice(fresh.retention_advice);
      return done;
    },
    // The advice is optional: after a failed ask it simply stays "being worked out".
    onError: () => true,
  }, [advice]);

  const desired = Number(draft.desired_retention);
  const text = adviceText(advice, Number.isFinite(desired) ? desired : saved.desired_retention);
  const advised = advice.status === "ready" ? advice.advised_retention : null;
  const tzHint =
    draft.timezone !== saved.timezone && saved.updated_at === null && draft.timezone === browser
      ? `Your browser's time zone; saved when you save these settings (now ${saved.timezone}).`
      : "Type to search, e.g. Europe/Paris. Your days and review reminders follow it.";

  return (
    <Section id="scheduling" title="Scheduling">
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save.run(async () => {
            const body = patchOf(saved, draft);
            if (Object.keys(body).length === 0) return "Nothing to save: the settings are as they were.";
            const next = await call(client.PATCH("/api/v1/srs/settings/", { body: body as SchedulingPatch }));
            setSaved(next);
            setDraft(draftOf(next, next.timezone));
            setAdvice(next.retention_advice);
            return "desired_retention" in body
              ? "Scheduling settings saved. Your review cards move to the due dates the new retention gives."
              : "Scheduling settings saved.";
          });
        }}
      >
        <Field
          id="timezone"
          name="timezone"
          required={false}
          label="Time zone"
          list="timezone-options"
          hint={tzHint}
          value={draft.timezone}
          onInput={set("timezone")}
          errors={errors("timezone")}
        />
        <datalist id="timezone-options">
          {zones.map((zone) => (
            <option key={zone} value={zone} />
          ))}
        </datalist>
        <Select
          id="day_start_hour"
          label="Your day starts at"
          hint="Reviews after midnight and before this hour count for the day before."
          value={draft.day_start_hour}
          options={HOURS}
          onChange={set("day_start_hour")}
          errors={errors("day_start_hour")}
        />
        <Field
          id="desired_retention"
          name="desired_retention"
          required={false}
          label="Desired retention"
          type="number"
          inputMode="decimal"
          min={0.7}
          max={0.99}
          step={0.01}
          hint="The chance of remembering a card when it comes back, from 0.70 to 0.99. Higher means more reviews."
          value={draft.desired_retention}
          onInput={set("desired_retention")}
          errors={errors("desired_retention")}
        />
        <div class="advice" aria-live="polite">
          {text !== null ? (
            <p>
              <strong>Advice:</strong> {text}{" "}
              {advised !== null && Math.abs(advised - desired) >= 0.005 && (
                <button
                  type="button"
                  class="button link-button"
                  onClick={() => set("desired_retention")(advised.toFixed(2))}
                >
                  Use {advised.toFixed(2)}
                </button>
              )}
            </p>
          ) : advice.status === "computing" ? (
            <p class="meta">The advised retention for your reviews is being worked out…</p>
          ) : null}
        </div>
        <div class="settings-grid">
          <Field
            id="new_cards_per_day"
            name="new_cards_per_day"
            required={false}
            label="New cards a day"
            type="number"
            inputMode="numeric"
            min={0}
            max={9999}
            value={draft.new_cards_per_day}
            onInput={set("new_cards_per_day")}
            errors={errors("new_cards_per_day")}
          />
          <Field
            id="max_reviews_per_day"
            name="max_reviews_per_day"
            required={false}
            label="Most reviews a day"
            type="number"
            inputMode="numeric"
            min={0}
            max={99999}
            value={draft.max_reviews_per_day}
            onInput={set("max_reviews_per_day")}
            errors={errors("max_reviews_per_day")}
          />
          <Field
            id="maximum_interval_days"
            name="maximum_interval_days"
            required={false}
            label="Longest interval (days)"
            type="number"
            inputMode="numeric"
            min={1}
            max={36500}
            value={draft.maximum_interval_days}
            onInput={set("maximum_interval_days")}
            errors={errors("maximum_interval_days")}
          />
          <Field
            id="leech_threshold"
            name="leech_threshold"
            required={false}
            label="Lapses before a card is a leech"
            type="number"
            inputMode="numeric"
            min={1}
            max={100}
            value={draft.leech_threshold}
            onInput={set("leech_threshold")}
            errors={errors("leech_threshold")}
          />
        </div>
        <Check
          id="suspend_leeches"
          label="Suspend leeches"
          hint="Take a card out of your reviews once it is a leech."
          checked={draft.suspend_leeches}
          onChange={set("suspend_leeches")}
          errors={errors("suspend_leeches")}
        />
        <Check
          id="load_balancing"
          label="Spread reviews evenly over the days"
          checked={draft.load_balancing}
          onChange={set("load_balancing")}
          errors={errors("load_balancing")}
        />
        <Check
          id="auto_optimize"
          label="Fit the memory model to my reviews automatically"
          hint="Adopted only when it predicts your recall better than the one in use."
          checked={draft.auto_optimize}
          onChange={set("auto_optimize")}
          errors={errors("auto_optimize")}
        />
        <button type="submit" class="button primary" disabled={save.busy}>
          {save.busy ? "Saving…" : "Save scheduling"}
        </button>
        <SaveStatus save={save} />
      </form>
      <Optimize settings={saved} />
    </Section>
  );
}

function Optimize({ settings }: { settings: Scheduling }) {
  const [fit, setFit] = useState(settings.parameter_fits[0] ?? null);
  const save = useSave();
  return (
    <div class="optimize">
      <h3>Memory model</h3>
      <p class="meta">
        {fit === null
          ? "Your reviews have not been fitted yet; the default model is in use."
          : `Latest fit: ${fit.status}${fit.reason ? `. ${fit.reason}` : ""}`}
      </p>
      <button
        type="button"
        class="button secondary"
        disabled={save.busy}
        onClick={() =>
          void save.run(async () => {
            const next = await call(client.POST("/api/v1/srs/optimize/"));
            setFit(next);
            return "A fit of the model to your reviews was started; its result shows here when you come back.";
          })
        }
      >
        Fit it to my reviews now
      </button>
      <SaveStatus save={save} />
    </div>
  );
}

function RemindersForm({ me, timezone }: { me: Me; timezone: string }) {
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
          options={HOURS}
          onChange={setHour}
          errors={fieldErrors(save.error, "email_settings.reminder_hour")}
        />
        <button type="submit" class="button primary" disabled={save.busy}>
          {save.busy ? "Saving…" : "Save reminders"}
        </button>
        <SaveStatus save={save} />
      </form>
    </Section>
  );
}

function PasswordForm() {
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
        <SaveStatus save={save} />
      </form>
    </Section>
  );
}

function deviceWhen(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "not yet";
}

function DevicesSection() {
  const [devices, setDevices] = useState<Device[] | null>(null);
  const [version, setVersion] = useState(0);
  const save = useSave();
  useEffect(() => {
    void call(client.GET("/api/v1/auth/devices/")).then(setDevices, () => setDevices([]));
  }, [version]);
  return (
    <Section id="devices" title="Signed-in devices">
      <p>Each device you sign in on has its own key; it stops working after 30 days unused.</p>
      {devices === null ? (
        <p>Loading…</p>
      ) : (
        <ul class="device-list">
          {devices.map((device) => (
            <li key={device.id}>
              <strong>{device.name}</strong>
              {device.current && " (this device)"}
              <br />
              <span class="hint">
                Signed in {deviceWhen(device.signed_in_at)} · last used {deviceWhen(device.last_used_at)}
              </span>
              {!device.current && (
                <>
                  {" "}
                  <button
                    type="button"
                    class="button secondary"
                    disabled={save.busy}
                    aria-label={`Sign out ${device.name}`}
                    onClick={() =>
                      void save.run(async () => {
                        await call(
                          client.DELETE("/api/v1/auth/devices/{device_id}/", { params: { path: { device_id: device.id } } }),
                        );
                        setVersion((value) => value + 1);
                        return `${device.name} is signed out.`;
                      })
                    }
                  >
                    Sign out
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <button
        type="button"
        class="button danger"
        disabled={save.busy}
        onClick={() =>
          void save.run(async () => {
            await signOutEverywhere();
            navigate("/signin", { replace: true });
            return "Every device is signed out.";
          })
        }
      >
        Sign out everywhere
      </button>
      <SaveStatus save={save} />
    </Section>
  );
}

function DataSection({ me }: { me: Me }) {
  const exporting = useSave();
  const deleting = useSave();
  const [confirming, setConfirming] = useState(false);
  const [password, setPassword] = useState("");
  return (
    <Section id="data" title="Your data">
      <p>Download everything stored about you, as one JSON file.</p>
      <button
        type="button"
        class="button secondary"
        disabled={exporting.busy}
        onClick={() =>
          void exporting.run(async () => {
            const document = await call(client.GET("/api/v1/me/export/"));
            const url = URL.createObjectURL(new Blob([JSON.stringify(document, null, 2)], { type: "application/json" }));
            const link = window.document.createElement("a");
            link.href = url;
            link.download = exportFileName(me.username, new Date());
            link.click();
            setTimeout(() => URL.revokeObjectURL(url), 10_000);
            return "Your data was downloaded.";
          })
        }
      >
        {exporting.busy ? "Preparing…" : "Download my data"}
      </button>
      <SaveStatus save={exporting} />
      <h3>Delete account</h3>
      <p>Deleting your account removes your reviews, progress and settings for good.</p>
      {!confirming ? (
        <button type="button" class="button danger" onClick={() => setConfirming(true)}>
          Delete my account…
        </button>
      ) : (
        <form
          class="danger-zone"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            void deleting.run(async () => {
              await call(client.POST("/api/v1/me/delete/", { body: { password } }));
              writeToken(null);
              navigate("/signin", { replace: true });
              await loadSession();
              return "Your account was deleted.";
            });
          }}
        >
          <Field
            id="delete_password"
            name="delete_password"
            required={false}
            label="Your password, to confirm"
            type="password"
            autoComplete="current-password"
            value={password}
            onInput={setPassword}
            errors={fieldErrors(deleting.error, "password")}
          />
          <p class="end-actions">
            <button type="submit" class="button danger" disabled={deleting.busy}>
              {deleting.busy ? "Deleting…" : "Delete my account for good"}
            </button>
            <button
              type="button"
              class="button secondary"
              onClick={() => {
                setConfirming(false);
                setPassword("");
              }}
            >
              Cancel
            </button>
          </p>
          {deleting.error !== null && <ErrorMessage message={describeError(deleting.error)} />}
        </form>
      )}
    </Section>
  );
}

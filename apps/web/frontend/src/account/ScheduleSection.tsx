/** Scheduling settings: the form with its retention advice, the memory models in use, and fitting the learner's weights now. */
import { useMemo, useState } from "preact/hooks";
import { call, client } from "../api/client";
import { fieldErrors } from "../api/errors";
import type { components } from "../api/schema";
import { Check, Field, Select } from "../components/Field";
import { usePolling } from "../hooks";
import { Section } from "./Section";
import { SaveStatus, useSave } from "./fields";
import {
  adviceText,
  browserTimeZone,
  browserTimeZones,
  changed,
  initialTimeZone,
  numberOrRaw,
  HOUR_OPTIONS,
  timeZoneNames,
} from "./settings";

type S = components["schemas"];
type Scheduling = S["SchedulingSettingsOutput"];
type SchedulingPatch = S["PatchedSchedulingSettingsInputRequest"];

const ADVICE_POLLS = 5;
const ADVICE_POLL_MS = 4000;

interface ScheduleDraft {
  timezone: string;
  day_start_hour: string;
  desired_retention: string;
  new_cards_per_day: string;
  max_reviews_per_day: string;
  daily_goal: string;
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
    daily_goal: String(settings.daily_goal),
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
    daily_goal: numberOrRaw(draft.daily_goal),
    maximum_interval_days: numberOrRaw(draft.maximum_interval_days),
    leech_threshold: numberOrRaw(draft.leech_threshold),
    suspend_leeches: draft.suspend_leeches,
    load_balancing: draft.load_balancing,
    auto_optimize: draft.auto_optimize,
  };
  return changed(saved as unknown as Record<string, unknown>, edited);
}

// The fields the form shows its own messages beside.
const SCHEDULING_FIELDS = [
  "timezone",
  "desired_retention",
  "day_start_hour",
  "new_cards_per_day",
  "max_reviews_per_day",
  "daily_goal",
  "maximum_interval_days",
  "leech_threshold",
  "suspend_leeches",
  "load_balancing",
  "auto_optimize",
];

export function SchedulingForm({
  initial,
  onSaved,
}: {
  initial: Scheduling;
  onSaved?: (next: Scheduling) => void;
}) {
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

  // The advice weighs the saved retention (its workloads are worked out for it), not one being typed.
  const text = adviceText(advice, saved.desired_retention);
  const typed = Number(draft.desired_retention);
  const desired = Number.isFinite(typed) ? typed : saved.desired_retention;
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
            onSaved?.(next);
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
          options={HOUR_OPTIONS}
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
            id="daily_goal"
            name="daily_goal"
            required={false}
            label="Daily goal (reviews, 0 for none)"
            type="number"
            inputMode="numeric"
            min={0}
            max={9999}
            value={draft.daily_goal}
            onInput={set("daily_goal")}
            errors={errors("daily_goal")}
          />
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
        <SaveStatus save={save} inline={SCHEDULING_FIELDS} />
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
      <CourseModels models={settings.memory_models} />
      <p class="meta">
        {fit === null
          ? settings.memory_models.some((model) => model.in_use)
            ? "Your own weights have not been fitted to your reviews yet."
            : "Your reviews have not been fitted yet; the default model is in use."
          : `Latest fit of your own weights: ${fit.status}${fit.reason ? `. ${fit.reason}` : ""}`}
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

/** Each course's model learned from all its learners, and whether it schedules this learner's cards. */
function CourseModels({ models }: { models: Scheduling["memory_models"] }) {
  if (models.length === 0) return null;
  return (
    <ul class="course-models">
      {models.map((model) => (
        <li key={model.course}>
          {model.in_use
            ? `Your cards of ${model.course_title} are scheduled with the model learned from the reviews of ` +
              `${model.learners} learners of the course, which knows how hard each of its cards is.`
            : `Your cards of ${model.course_title} are scheduled with your own weights, not the model learned ` +
              `from ${model.learners} learners of the course.`}{" "}
          {model.why}
        </li>
      ))}
    </ul>
  );
}

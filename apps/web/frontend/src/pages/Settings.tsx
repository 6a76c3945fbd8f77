/** The learner's settings: profile, scheduling (with the retention advice), reminders, password, their data. */
import { AppearanceSection } from "../account/AppearanceSection";
import { DataSection } from "../account/DataSection";
import { DevicesSection } from "../account/DevicesSection";
import { PasswordForm, ProfileForm, RemindersForm } from "../account/forms";
import { SchedulingForm } from "../account/ScheduleSection";
import { call, client } from "../api/client";
import type { components } from "../api/schema";
import { Await, PageTitle } from "../components/common";
import { useState } from "preact/hooks";
import { useLoad, useTitle } from "../hooks";
import type { Me } from "../session";

type Scheduling = components["schemas"]["SchedulingSettingsOutput"];

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
        {({ me, scheduling }) => <SettingsSections me={me} scheduling={scheduling} />}
      </Await>
    </div>
  );
}

function SettingsSections({ me, scheduling }: { me: Me; scheduling: Scheduling }) {
  // Reminders are sent in the time zone scheduling saves: they follow it as soon as it is saved.
  const [timezone, setTimezone] = useState(scheduling.timezone);
  return (
    <>
      <ProfileForm me={me} />
      <SchedulingForm initial={scheduling} onSaved={(next) => setTimezone(next.timezone)} />
      <RemindersForm me={me} timezone={timezone} />
      <AppearanceSection />
      <PasswordForm />
      <DevicesSection />
      <DataSection me={me} />
    </>
  );
}

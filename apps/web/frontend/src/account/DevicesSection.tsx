/** The devices signed in to the account, each to be signed out on its own. */
import { useEffect, useState } from "preact/hooks";
import { call, client } from "../api/client";
import type { components } from "../api/schema";
import { formatMoment } from "../format";
import { signOutEverywhere } from "../session";
import { Section } from "./Section";
import { SaveStatus, useSave } from "./fields";

type S = components["schemas"];
type Device = S["DeviceOutput"];

function deviceWhen(iso: string | null | undefined): string {
  return iso ? formatMoment(iso) : "not yet";
}

export function DevicesSection() {
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

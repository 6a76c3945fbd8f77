/** The learner's data: downloading all of it, and deleting the account. */
import { useState } from "preact/hooks";
import { call, client } from "../api/client";
import { describeError, fieldErrors } from "../api/errors";
import { Field } from "../components/Field";
import { ErrorMessage } from "../components/common";
import { leaveForSignIn, type Me } from "../session";
import { Section } from "./Section";
import { SaveStatus, useSave } from "./fields";
import { exportFileName } from "./settings";

export function DataSection({ me }: { me: Me }) {
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
        <button
          type="button"
          class="button danger"
          onClick={() => {
            setConfirming(true);
            // The password is what is asked next: the keyboard goes there.
            requestAnimationFrame(() => document.getElementById("delete_password")?.focus());
          }}
        >
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
              leaveForSignIn("Your account was deleted, with everything it held.");
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

/** Sign in, sign up, and the two steps of a forgotten password. */
import { useState } from "preact/hooks";
import { call, client } from "../api/client";
import { describeError, fieldErrors } from "../api/errors";
import { ErrorMessage, Notice, PageTitle } from "../components/common";
import { Field } from "../components/Field";
import { useTitle } from "../hooks";
import { navigate, safeNext, type Location } from "../router";
import { deviceName } from "../account/device";
import { signInWithToken, takeFarewell } from "../session";

function useForm() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function run(action: () => Promise<void>): Promise<void> {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, run };
}

function withNext(path: string, next: string): string {
  return next === "/" ? path : `${path}?next=${encodeURIComponent(next)}`;
}

export function SignIn({ loc }: { loc: Location }) {
  useTitle("Sign in");
  const next = safeNext(loc.search.get("next"));
  const [farewell] = useState(takeFarewell);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const form = useForm();
  return (
    <div class="signin-layout">
    <section class="narrow">
      <PageTitle>Sign in</PageTitle>
      {farewell !== null && <Notice>{farewell}</Notice>}
      {form.error !== null && <ErrorMessage message={describeError(form.error)} />}
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void form.run(async () => {
            const { token } = await call(client.POST("/api/v1/auth/login/", { body: { email, password, device_name: deviceName() } }));
            await signInWithToken(token);
            navigate(next, { replace: true });
          });
        }}
      >
        <Field name="email" label="Email" type="email" autoComplete="email" value={email} onInput={setEmail} errors={fieldErrors(form.error, "email")} />
        <Field name="password" label="Password" type="password" autoComplete="current-password" value={password} onInput={setPassword} errors={fieldErrors(form.error, "password")} />
        <button type="submit" class="button primary" disabled={form.busy}>
          {form.busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p>
        <a href="/forgot-password">Forgot your password?</a>
      </p>
      <p>
        New here? <a href={withNext("/signup", next)}>Create an account</a>
      </p>
    </section>
    <About />
    </div>
  );
}

/** What this is, for someone who has not signed in yet. */
function About() {
  return (
    <aside class="card about" aria-labelledby="about-title">
      <h2 id="about-title">Learn it, then remember it</h2>
      <p>
        Quizsite teaches data pipelines with tf.data, and keeps what you learn: each card comes back just before
        you would forget it, scheduled by FSRS from your own reviews.
      </p>
      <ul>
        <li>Read the lessons and answer their questions in place.</li>
        <li>Flip memory decks, match terms to definitions against the clock, take quizzes.</li>
        <li>Write input pipelines and have them graded and timed against the expert's.</li>
        <li>Study on a phone or a desktop, online or not: reviews sync when the connection returns.</li>
      </ul>
    </aside>
  );
}

function browserTimezone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

export function SignUp({ loc }: { loc: Location }) {
  useTitle("Create an account");
  const next = safeNext(loc.search.get("next"));
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const form = useForm();
  const timezone = browserTimezone();
  if (sent !== null) {
    return (
      <section class="narrow">
        <PageTitle>Check your inbox</PageTitle>
        <Notice>
          <p>{sent}</p>
          <p>Open the link in the email we sent to {email} to finish creating your account.</p>
        </Notice>
        <p>
          Already have an account? <a href={withNext("/signin", next)}>Sign in</a>
        </p>
      </section>
    );
  }
  return (
    <section class="narrow">
      <PageTitle>Create an account</PageTitle>
      {form.error !== null && <ErrorMessage message={describeError(form.error)} />}
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void form.run(async () => {
            const result = await call(
              client.POST("/api/v1/auth/register/", {
                body: { email, password, display_name: displayName, timezone },
              }),
            );
            setSent(result.detail);
          });
        }}
      >
        <Field name="email" label="Email" type="email" autoComplete="email" value={email} onInput={setEmail} errors={fieldErrors(form.error, "email")} />
        <Field
          name="display_name"
          label="Display name"
          autoComplete="nickname"
          hint="Shown to other learners, for example on leaderboards if you opt in."
          value={displayName}
          onInput={setDisplayName}
          errors={fieldErrors(form.error, "display_name")}
        />
        <Field
          name="password"
          label="Password"
          type="password"
          autoComplete="new-password"
          hint="At least 8 characters, not a common password."
          value={password}
          onInput={setPassword}
          errors={fieldErrors(form.error, "password")}
        />
        <p class="hint">Your day starts in the time zone {timezone}; you can change it in Settings.</p>
        <FieldErrorsFor error={form.error} name="timezone" />
        <button type="submit" class="button primary" disabled={form.busy}>
          {form.busy ? "Creating…" : "Create account"}
        </button>
      </form>
      <p>
        Already have an account? <a href={withNext("/signin", next)}>Sign in</a>
      </p>
    </section>
  );
}

function FieldErrorsFor({ error, name }: { error: unknown; name: string }) {
  const messages = fieldErrors(error, name);
  if (messages.length === 0) return null;
  return <p class="field-errors">{messages.join(" ")}</p>;
}

export function ForgotPassword() {
  useTitle("Forgot password");
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const form = useForm();
  return (
    <section class="narrow">
      <PageTitle>Forgot your password?</PageTitle>
      {sent !== null ? (
        <Notice>
          <p>{sent}</p>
          <p>The link in it lets you choose a new password.</p>
        </Notice>
      ) : (
        <>
          <p>Enter the email of your account and we will send you a link to choose a new password.</p>
          {form.error !== null && <ErrorMessage message={describeError(form.error)} />}
          <form
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              void form.run(async () => {
                const result = await call(client.POST("/api/v1/auth/password/reset/", { body: { email } }));
                setSent(result.detail || "If an account has this email, a reset link is on its way.");
              });
            }}
          >
            <Field name="email" label="Email" type="email" autoComplete="email" value={email} onInput={setEmail} errors={fieldErrors(form.error, "email")} />
            <button type="submit" class="button primary" disabled={form.busy}>
              {form.busy ? "Sending…" : "Send the link"}
            </button>
          </form>
        </>
      )}
      <p>
        <a href="/signin">Back to sign in</a>
      </p>
    </section>
  );
}

export function ResetPassword({ loc }: { loc: Location }) {
  useTitle("Choose a new password");
  const uid = loc.search.get("uid") ?? "";
  const token = loc.search.get("token") ?? "";
  const [password, setPassword] = useState("");
  const form = useForm();
  if (uid === "" || token === "") {
    return (
      <section class="narrow">
        <PageTitle>Choose a new password</PageTitle>
        <ErrorMessage message="This reset link is incomplete. Open the link from the email again, or ask for a new one." />
        <p>
          <a href="/forgot-password">Ask for a new link</a>
        </p>
      </section>
    );
  }
  return (
    <section class="narrow">
      <PageTitle>Choose a new password</PageTitle>
      {form.error !== null && <ErrorMessage message={describeError(form.error)} />}
      {form.error !== null && (
        <p>
          <a href="/forgot-password">Ask for a new link</a>
        </p>
      )}
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void form.run(async () => {
            const result = await call(
              client.POST("/api/v1/auth/password/reset/confirm/", {
                body: { uid, token, new_password: password, device_name: deviceName() },
              }),
            );
            await signInWithToken(result.token);
            navigate("/", { replace: true });
          });
        }}
      >
        <Field
          name="new_password"
          label="New password"
          type="password"
          autoComplete="new-password"
          hint="At least 8 characters, not a common password."
          value={password}
          onInput={setPassword}
          errors={fieldErrors(form.error, "new_password")}
        />
        <button type="submit" class="button primary" disabled={form.busy}>
          {form.busy ? "Saving…" : "Save and sign in"}
        </button>
      </form>
    </section>
  );
}

/** The sign-up email's link: one press creates the account and signs in (a mail scanner opening the link does not). */
export function ConfirmEmail({ loc }: { loc: Location }) {
  useTitle("Finish signing up");
  const token = loc.search.get("token") ?? "";
  const form = useForm();
  return (
    <section class="narrow">
      <PageTitle>Finish signing up</PageTitle>
      {token === "" ? (
        <ErrorMessage message="This sign-up link is incomplete. Open the link from the email again, or sign up again." />
      ) : (
        <>
          {form.error !== null && <ErrorMessage message={describeError(form.error)} />}
          <p>Your email address is confirmed once you create the account.</p>
          <button
            type="button"
            class="button primary"
            disabled={form.busy}
            onClick={() =>
              void form.run(async () => {
                const result = await call(
                  client.POST("/api/v1/auth/register/confirm/", { body: { token, device_name: deviceName() } }),
                );
                await signInWithToken(result.token);
                navigate("/", { replace: true });
              })
            }
          >
            {form.busy ? "Creating…" : "Create my account"}
          </button>
        </>
      )}
      <p>
        <a href="/signup">Sign up again</a> · <a href="/signin">Sign in</a>
      </p>
    </section>
  );
}

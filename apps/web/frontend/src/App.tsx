/** Picks the page for the current path, and sends signed-out visitors to sign in first. */
import { useEffect } from "preact/hooks";
import { ErrorMessage, Loading } from "./components/common";
import { Layout } from "./components/Layout";
import { lazyPage } from "./lazy";
import { ConfirmEmail, ForgotPassword, ResetPassword, SignIn, SignUp } from "./pages/auth";
import { NotFound, Unsubscribed } from "./pages/Notices";
import { Home } from "./pages/Home";
import { matchPath, navigate, safeNext, useLocation, type Location, type Params } from "./router";
import { loadSession, useSession, type Me } from "./session";

const LessonPage = lazyPage(() => import("./pages/Lesson"));
const DeckStudy = lazyPage(() => import("./pages/DeckStudy"));
const Settings = lazyPage(() => import("./pages/Settings"));
const Progress = lazyPage(() => import("./pages/Progress"));
const StudyOverview = lazyPage(() => import("./pages/StudyOverview"));
const Match = lazyPage(() => import("./pages/Match"));
const Quiz = lazyPage(() => import("./pages/Quiz"));
const QuizAttempt = lazyPage(() => import("./pages/QuizAttempt"));
const Exercise = lazyPage(() => import("./pages/Exercise"));
const Constellation = lazyPage(() => import("./pages/Constellation"));
const Explorer = lazyPage(() => import("./pages/Explorer"));
const CardBrowser = lazyPage(() => import("./pages/CardBrowser"));
const CardHistory = lazyPage(() => import("./pages/CardHistory"));

function Page({ name, params, loc, me }: { name: string; params: Params; loc: Location; me: Me | null }) {
  switch (name) {
    case "signin":
      return <SignIn loc={loc} />;
    case "signup":
      return <SignUp loc={loc} />;
    case "forgot-password":
      return <ForgotPassword />;
    case "reset-password":
      return <ResetPassword loc={loc} />;
    case "confirm-email":
      return <ConfirmEmail loc={loc} />;
    case "unsubscribed":
      return <Unsubscribed />;
  }
  if (me === null) return <Loading />;
  switch (name) {
    case "home":
      return <Home me={me} />;
    case "lesson":
      return <LessonPage key={params.slug} slug={params.slug ?? ""} />;
    case "deck-study":
      return <DeckStudy key={params.slug} slug={params.slug ?? ""} />;
    case "settings":
      return <Settings />;
    case "progress":
      return <Progress />;
    case "study":
      return <StudyOverview />;
    case "deck-match":
      return <Match key={params.slug} slug={params.slug ?? ""} />;
    case "quiz":
      return <Quiz key={params.slug} slug={params.slug ?? ""} />;
    case "quiz-attempt":
      return <QuizAttempt key={params.id} id={params.id ?? ""} />;
    case "exercise":
      return <Exercise key={params.slug} slug={params.slug ?? ""} />;
    case "constellation":
      return <Constellation key={params.slug} slug={params.slug ?? ""} />;
    case "explorer":
      return <Explorer key={params.slug} slug={params.slug ?? ""} />;
    case "card-browser":
      return <CardBrowser key={params.slug} slug={params.slug ?? ""} />;
    case "card":
      return <CardHistory key={params.id} id={params.id ?? ""} />;
  }
  return <NotFound path={loc.path} />;
}

export function App() {
  const loc = useLocation();
  const session = useSession();
  const { route, params } = matchPath(loc.path);
  const needsSignIn = route !== null && !route.public && session.status === "signed-out";
  const signedInOnAuthPage =
    session.status === "signed-in" && (route?.name === "signin" || route?.name === "signup");

  useEffect(() => {
    if (needsSignIn) navigate(`/signin?next=${encodeURIComponent(loc.full)}`, { replace: true });
    else if (signedInOnAuthPage) navigate(safeNext(loc.search.get("next")), { replace: true });
  }, [needsSignIn, signedInOnAuthPage, loc.full, loc.search]);

  let body;
  if (route === null) body = <NotFound path={loc.path} />;
  else if (!route.public && session.status === "error")
    body = <ErrorMessage message={session.message} onRetry={() => void loadSession()} />;
  else if (!route.public && session.status !== "signed-in") body = <Loading />;
  else
    body = (
      <Page name={route.name} params={params} loc={loc} me={session.status === "signed-in" ? session.me : null} />
    );
  return (
    <Layout session={session} path={loc.path}>
      {body}
    </Layout>
  );
}

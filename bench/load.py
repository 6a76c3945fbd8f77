"""Load: simulated learners doing a realistic session mix against the web server, PostgreSQL, Redis and a Celery worker.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.load [--learners 50] [--seconds 120]
It creates (and afterwards drops) a test database, loads the shipped course (decks/), starts a private
redis-server, the production web server (quizsite/server.py) and one Celery
worker (queues default and gpu, concurrency 1), with the request rate limits lifted. Each learner signs
in, then keeps choosing: a study session (study queue, single reviews with think time, an undo now and
then), an offline batch of 20-200 reviews (most of them older than the learner's latest online ones),
Match the Pairs, a quiz, or browsing; a few pipeline submissions in the whole run are graded by the
worker and polled. One grading runs before the clock starts, so the worker's start is not measured.

Reports requests/s, p50/p99 per route, the errors (any answer that is not 2xx/3xx and not a 4xx the
learners provoke on purpose, every 5xx, every timeout or connection error) and the gradings finished.
Targets at 50 learners: 0 errors, 0 timeouts; study p99 <= 4 x study p50.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from bench.stack import (  # noqa: E402
    REPO_ROOT,
    Server,
    Worker,
    bench_database,
    celery_worker,
    log_tail,
    production_env,
    redis_server,
    unthrottled,
    web_describe,
    web_server,
)

PASSWORD = "bench-learner-password-7"  # noqa: S105 - accounts in a throwaway database
# Requests that take longer than this count as timeouts (and errors).
REQUEST_TIMEOUT_SECONDS = 30.0
# Connections idle longer than this are closed before the next request: a server that keeps
# connections alive closes idle ones after its keepalive (gunicorn's default was 2 s), and a request
# sent on a connection the server has just closed would read as a connection error.
IDLE_RECONNECT_SECONDS = 1.0
SUBMISSION_POLL_SECONDS = 2.0
# The first grading makes the exercise's data on a new machine, which takes minutes.
WARMUP_GRADING_SECONDS = 900.0
SUBMISSION_EXERCISE = "generator-simulator-source"
SHORT_TEXT_ANSWERS = ("prefetch", "TFRecord", "AUTOTUNE", "interleave", "cache", "no idea")
NUMERIC_ANSWERS = (32, 4, 0.5, 128, 1024, 3.0)
# How often a learner picks each activity once signed in (the rarer submissions are planned apart).
ACTIVITY_WEIGHTS = {"study": 50, "browse": 22, "match": 11, "quiz": 10, "batch": 7}
TIMEZONES = ("UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "America/Sao_Paulo")


# --- What the learners are told about the course (read from the database, as a client would cache it) ---


@dataclass(frozen=True)
class World:
    port: int
    course: str
    lesson: str
    decks: list[str]
    quizzes: list[str]
    questions: list[str]
    exercises: list[str]
    scene: str
    regions: list[str]
    # The code submitted to SUBMISSION_EXERCISE: its naive and expert references, both accepted.
    submission_codes: list[str]


def world_read(port: int) -> World:
    from apps.content.models import Course, Deck, ExplorerRegion, ExplorerScene, Lesson, PipelineExercise, Quiz
    from apps.content.models.questions import Question
    from worker.grader import course_file_exercises

    exercise = course_file_exercises(REPO_ROOT / "decks" / "tensorflow-ai-phd.yaml")[SUBMISSION_EXERCISE]
    scene = ExplorerScene.objects.filter(archived=False).order_by("position").first()
    assert scene is not None, "the course has no explorer scene"
    return World(
        port=port,
        course=Course.objects.get(archived=False).slug,
        lesson=Lesson.objects.filter(archived=False).order_by("position")[0].slug,
        decks=list(Deck.objects.filter(archived=False).values_list("slug", flat=True)),
        quizzes=list(Quiz.objects.filter(archived=False).values_list("slug", flat=True)),
        questions=list(Question.objects.filter(archived=False).values_list("slug", flat=True)),
        exercises=list(PipelineExercise.objects.filter(archived=False).values_list("slug", flat=True)),
        scene=scene.slug,
        regions=list(ExplorerRegion.objects.filter(scene=scene, archived=False).values_list("slug", flat=True)),
        submission_codes=[exercise.spec["references"]["naive"], exercise.spec["references"]["expert"]],
    )


def learners_create(count: int) -> list[str]:
    """`count` registered learners (various time zones, half on the leaderboards) with one known password.

    The password is hashed once with the production hasher (this process runs the test settings'
    fast one), so signing in costs the server what it costs in production.
    """
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from apps.accounts.mail import registration_confirm_token
    from apps.accounts.profiles import learner_profile_update
    from apps.accounts.services import account_register, registration_confirm

    emails = [f"learner{i}@bench.example" for i in range(count)]
    for i, email in enumerate(emails):
        pending = account_register(
            email=email, password=PASSWORD, display_name=f"Learner {i}", timezone=TIMEZONES[i % len(TIMEZONES)]
        )
        # As the learner's click on the emailed link does.
        registered = registration_confirm(token=registration_confirm_token(pending))
        if i % 2 == 0:
            learner_profile_update(learner=registered.user, changes={"show_on_leaderboards": True})
    hasher = PBKDF2PasswordHasher()
    get_user_model().objects.filter(email__in=emails).update(password=hasher.encode(PASSWORD, hasher.salt()))
    return emails


def course_load() -> str:
    """Load decks/ as `manage.py load_decks` does; returns what it holds, in a few words."""
    from django.core.management import call_command

    from apps.content.models import Card, PipelineExercise, Quiz
    from apps.content.models.questions import Question

    call_command("load_decks", stdout=io.StringIO())
    return (
        f"{Card.objects.count()} cards, {Question.objects.count()} questions, {Quiz.objects.count()} quizzes, "
        f"{PipelineExercise.objects.count()} exercises"
    )


# --- Recording ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    route: str
    status: int  # 0: no answer (timeout or connection error)
    ms: float
    at: float  # time.monotonic() when the answer came
    error: bool
    provoked: bool  # a 4xx the learner asked for on purpose


@dataclass
class Submitted:
    id: int
    sent_at: float
    status: str = "queued"
    verdict: str | None = None
    done_at: float | None = None


class Recorder:
    """Every request's route, status and latency; the first few errors in full."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.samples: list[Sample] = []
        self.error_examples: list[str] = []
        self.submissions: list[Submitted] = []
        self.failures: list[str] = []

    def record(self, sample: Sample, detail: str) -> None:
        with self._lock:
            self.samples.append(sample)
            if sample.error and len(self.error_examples) < 12:
                self.error_examples.append(f"{sample.route} -> {sample.status or 'no answer'}: {detail}")

    def failed(self, what: str) -> None:
        with self._lock:
            self.failures.append(what)

    def submitted(self, submission: Submitted) -> None:
        with self._lock:
            self.submissions.append(submission)


class Client:
    """One learner's HTTP client: a keep-alive connection, the token, and the recorder."""

    def __init__(self, port: int, recorder: Recorder) -> None:
        self.port = port
        self.recorder = recorder
        self.token = ""
        self._connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_SECONDS)
        self._last_used = 0.0

    def close(self) -> None:
        self._connection.close()

    def call(self, method: str, path: str, route: str, body: Any = None, provoke: Sequence[int] = ()) -> Any:
        """Send one request; its JSON answer when it succeeded (or is a provoked refusal), else None.

        `route` is the path's template (`GET /decks/{slug}/study/`), the unit of the report.
        """
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if time.monotonic() - self._last_used > IDLE_RECONNECT_SECONDS:
            self._connection.close()
        started = time.perf_counter()
        status, content, detail = 0, b"", ""
        try:
            self._connection.request(method, "/api/v1" + path, body=data, headers=headers)
            response = self._connection.getresponse()
            content = response.read()
            status = response.status
        except TimeoutError:
            detail = f"timeout after {REQUEST_TIMEOUT_SECONDS:.0f} s"
            self._connection.close()
        except (OSError, http.client.HTTPException) as exc:
            detail = f"connection error {exc!r}"
            self._connection.close()
        ms = (time.perf_counter() - started) * 1000
        self._last_used = time.monotonic()
        provoked = status in provoke
        error = status == 0 or (status >= 400 and not provoked)
        if error and not detail:
            detail = content[:300].decode(errors="replace")
        self.recorder.record(
            Sample(route=route, status=status, ms=ms, at=self._last_used, error=error, provoked=provoked), detail
        )
        return json.loads(content) if content and not error else None


# --- The learners ------------------------------------------------------------------------------------


class SubmissionPlan:
    """When, in the whole run, a pipeline submission is sent: each goes to the first learner to pause after it."""

    def __init__(self, times: list[float]) -> None:
        self._lock = threading.Lock()
        self._times = sorted(times)
        self.planned = len(times)

    @property
    def unclaimed(self) -> int:
        with self._lock:
            return len(self._times)

    def claim(self, now: float) -> bool:
        with self._lock:
            if self._times and self._times[0] <= now:
                self._times.pop(0)
                return True
            return False


@dataclass
class ReviewSent:
    id: int
    body: dict[str, Any]


@dataclass
class Learner:
    index: int
    email: str
    world: World
    client: Client
    deadline: float
    think: float
    start_delay: float
    plan: SubmissionPlan
    rng: random.Random = field(init=False)
    cards: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.index)

    # The clock of the run: no new request once it is over.
    def running(self) -> bool:
        return time.monotonic() < self.deadline

    def pause(self, low: float, high: float) -> bool:
        """Think for a while (scaled by --think); False when the run ended meanwhile.

        A planned submission that is due is sent first (from another tab, as it were) and polled until graded.
        """
        if self.plan.claim(time.monotonic()):
            self.submit()
        seconds = self.rng.uniform(low, high) * self.think
        time.sleep(max(0.0, min(seconds, self.deadline - time.monotonic())))
        return self.running()

    def run(self) -> None:
        try:
            time.sleep(min(self.start_delay, max(0.0, self.deadline - time.monotonic())))
            if not self.running() or not self.sign_in():
                return
            activities: dict[str, Callable[[], None]] = {
                "study": self.study,
                "browse": self.browse,
                "match": self.match,
                "quiz": self.quiz,
                "batch": self.batch,
            }
            names = list(activities)
            weights = [ACTIVITY_WEIGHTS[name] for name in names]
            while self.running():
                activities[self.rng.choices(names, weights)[0]]()
                self.pause(1.0, 4.0)
        except Exception as exc:
            # An answer the learner cannot read ends that learner only, not the others' run and its report.
            self.client.recorder.failed(f"learner {self.index}: {exc!r}")
        finally:
            self.client.close()

    def sign_in(self) -> bool:
        body = self.client.call(
            "POST", "/auth/login/", "POST /auth/login/", {"email": self.email, "password": PASSWORD}
        )
        if body is None:
            return False
        self.client.token = body["token"]
        self.client.call("GET", "/me/", "GET /me/")
        body = self.client.call("GET", f"/decks/{self.deck}/cards/?page_size=200", "GET /decks/{slug}/cards/")
        self.cards = body["results"] if body else []
        return bool(self.cards)

    @property
    def deck(self) -> str:
        return self.world.decks[self.index % len(self.world.decks)]

    # Study: the queue, then single reviews with think time; a retry, a reused id or an undo now and then.
    def study(self) -> None:
        queue = self.client.call("GET", f"/decks/{self.deck}/study/", "GET /decks/{slug}/study/")
        if queue is None:
            return
        card_ids = [item["card"]["id"] for item in queue["cards"]]
        if not card_ids:
            if self.rng.random() < 0.5:
                return
            # Nothing due: some learners review a few cards anyway (custom study).
            card_ids = [card["id"] for card in self.rng.sample(self.cards, min(len(self.cards), 5))]
        started = datetime.now(UTC)
        known = 0
        for n, card_id in enumerate(card_ids[: self.rng.randint(4, 15)]):
            if not self.pause(1.5, 6.0):
                return
            sent = self.review(card_id)
            known += sent is not None and sent.body["rating"] >= 3
            if sent is None:
                continue
            draw = self.rng.random()
            if draw < 0.03:
                self.client.call("POST", f"/reviews/{sent.id}/undo/", "POST /reviews/{id}/undo/")
            elif draw < 0.06:
                # The app lost the answer and sends the same review again: the first result, nothing new.
                self.client.call("POST", "/reviews/", "POST /reviews/", sent.body)
            elif draw < 0.08:
                # A client bug reusing the id for another review: refused with 409, the first one stands.
                reused = {**sent.body, "rating": 1 + sent.body["rating"] % 4}
                self.client.call("POST", "/reviews/", "POST /reviews/ (id reused)", reused, provoke=(409,))
            if n and n % 8 == 0:
                self.client.call("GET", f"/decks/{self.deck}/study/", "GET /decks/{slug}/study/")
        if self.rng.random() < 0.15:
            total = min(len(card_ids), 15)
            body = {
                "known": min(known, total),
                "total": total,
                "started_at": started.isoformat(),
                "finished_at": datetime.now(UTC).isoformat(),
                "client_pass_id": str(uuid.uuid4()),
            }
            self.client.call("POST", f"/decks/{self.deck}/passes/", "POST /decks/{slug}/passes/", body)

    def review(self, card_id: int) -> ReviewSent | None:
        body = {
            "card": card_id,
            "rating": self.rng.choices((1, 2, 3, 4), (10, 15, 60, 15))[0],
            "duration_ms": self.rng.randint(1500, 20000),
            "client_review_id": str(uuid.uuid4()),
        }
        answer = self.client.call("POST", "/reviews/", "POST /reviews/", body)
        return ReviewSent(id=answer["id"], body=body) if answer else None

    # Offline: reviews made over the last hours, sent in one batch; many are older than online ones.
    def batch(self) -> None:
        now = datetime.now(UTC)
        count = self.rng.randint(20, 200)
        moments = sorted(now - timedelta(seconds=self.rng.uniform(60, 6 * 3600)) for _ in range(count))
        reviews = [
            {
                "card": self.rng.choice(self.cards)["id"],
                "rating": self.rng.choices((1, 2, 3, 4), (10, 15, 60, 15))[0],
                "reviewed_at": moment.isoformat(),
                "duration_ms": self.rng.randint(1500, 20000),
                "client_review_id": str(uuid.uuid4()),
            }
            for moment in moments
        ]
        self.client.call("POST", "/reviews/batch/", "POST /reviews/batch/", {"reviews": reviews})

    # Match the Pairs: the learner knows most pairs from the deck's cards, and sometimes guesses wrong.
    def match(self) -> None:
        pairs = self.rng.randint(4, 8)
        board = self.client.call("POST", f"/decks/{self.deck}/match/", "POST /decks/{slug}/match/", {"pairs": pairs})
        if board is None:
            return
        url = f"/match/{board['id']}/attempts/"
        by_term: dict[str, set[int]] = {}
        by_definition: dict[str, set[int]] = {}
        for card in self.cards:
            by_term.setdefault(card["term"], set()).add(card["id"])
            by_definition.setdefault(card["definition"], set()).add(card["id"])
        terms = list(board["terms"])
        self.rng.shuffle(terms)
        open_definitions = {item["id"]: by_definition.get(item["text"], set()) for item in board["definitions"]}
        finished = False
        for term in terms:
            ruled_out: set[str] = set()
            while self.running() and not finished:
                if not self.pause(0.8, 3.0):
                    return
                right = [d for d, cards in open_definitions.items() if cards & by_term.get(term["text"], set())]
                candidates = [d for d in open_definitions if d not in ruled_out]
                if not candidates:
                    break
                guess = right[0] if right and self.rng.random() > 0.15 else self.rng.choice(candidates)
                body = {"term_id": term["id"], "definition_id": guess, "client_attempt_id": str(uuid.uuid4())}
                outcome = self.client.call("POST", url, "POST /match/{id}/attempts/", body)
                if outcome is None:
                    return
                finished = outcome["finished"]
                if outcome["correct"]:
                    open_definitions.pop(guess, None)
                    break
                ruled_out.add(guess)
            if finished or not self.running():
                break
        if self.rng.random() < 0.2:
            self.client.call("GET", f"/match/{board['id']}/", "GET /match/{id}/")
        if finished and self.rng.random() < 0.1 and board["terms"]:
            # A late tap on a finished board: refused with 409 board_finished.
            late = {"term_id": board["terms"][0]["id"], "definition_id": board["definitions"][0]["id"]}
            self.client.call("POST", url, "POST /match/{id}/attempts/ (finished)", late, provoke=(409,))
        self.client.call("GET", f"/decks/{self.deck}/match/history/?page_size=10", "GET /decks/{slug}/match/history/")
        if self.rng.random() < 0.3:
            path = f"/decks/{self.deck}/match/leaderboard/?pairs={pairs}"
            self.client.call("GET", path, "GET /decks/{slug}/match/leaderboard/")

    # A quiz: start an attempt, answer some or all questions, finish.
    def quiz(self) -> None:
        slug = self.rng.choice(self.world.quizzes)
        self.client.call("GET", f"/quizzes/{slug}/", "GET /quizzes/{slug}/")
        attempt = self.client.call(
            "POST", f"/quizzes/{slug}/attempts/", "POST /quizzes/{slug}/attempts/", {"mode": "all"}
        )
        if attempt is None:
            return
        questions = attempt["questions"]
        count = len(questions) if len(questions) <= 8 else self.rng.randint(3, 8)
        finished = False
        for question in questions[:count]:
            if not self.pause(2.0, 8.0):
                return
            body: dict[str, Any] = {"question": question["slug"], "client_answer_id": str(uuid.uuid4())}
            keys = [choice["key"] for choice in question["choices"]]
            if question["kind"] == "single_choice":
                body["choice"] = self.rng.choice(keys)
            elif question["kind"] == "multiple_choice":
                body["choices"] = self.rng.sample(keys, self.rng.randint(1, len(keys)))
            elif question["kind"] == "short_text":
                body["text"] = self.rng.choice(SHORT_TEXT_ANSWERS)
            else:
                body["number"] = self.rng.choice(NUMERIC_ANSWERS)
            path = f"/quiz-attempts/{attempt['id']}/answers/"
            answer = self.client.call("POST", path, "POST /quiz-attempts/{id}/answers/", body)
            if answer is None:
                return
            finished = answer["attempt"]["finished"]
        if self.rng.random() < 0.2:
            self.client.call("GET", f"/quiz-attempts/{attempt['id']}/", "GET /quiz-attempts/{id}/")
        finish = f"/quiz-attempts/{attempt['id']}/finish/"
        if not finished:
            self.client.call("POST", finish, "POST /quiz-attempts/{id}/finish/")
        elif self.rng.random() < 0.2:
            # Finishing an attempt that finished itself: refused with 409.
            self.client.call("POST", finish, "POST /quiz-attempts/{id}/finish/ (finished)", provoke=(409,))

    # Browsing the course: a few reads, and an explorer region opened now and then.
    def browse(self) -> None:
        world = self.world
        card = self.rng.choice(self.cards)["id"]
        reads = [
            ("/courses/", "GET /courses/"),
            (f"/courses/{world.course}/", "GET /courses/{slug}/"),
            (f"/courses/{world.course}/concept-graph/", "GET /courses/{slug}/concept-graph/"),
            (f"/courses/{world.course}/constellation/", "GET /courses/{slug}/constellation/"),
            (f"/lessons/{world.lesson}/", "GET /lessons/{slug}/"),
            ("/decks/", "GET /decks/"),
            (f"/decks/{self.deck}/", "GET /decks/{slug}/"),
            (f"/decks/{self.deck}/cards/?page_size=50", "GET /decks/{slug}/cards/"),
            (f"/cards/{card}/", "GET /cards/{id}/"),
            (f"/questions/{self.rng.choice(world.questions)}/", "GET /questions/{slug}/"),
            ("/quizzes/", "GET /quizzes/"),
            ("/quiz-attempts/", "GET /quiz-attempts/"),
            ("/exercises/", "GET /exercises/"),
            (f"/exercises/{self.rng.choice(world.exercises)}/", "GET /exercises/{slug}/"),
            ("/submissions/", "GET /submissions/"),
            ("/explorer/", "GET /explorer/"),
            (f"/explorer/{world.scene}/", "GET /explorer/{slug}/"),
            ("/activity/", "GET /activity/"),
            ("/stats/", "GET /stats/"),
            ("/deck-passes/", "GET /deck-passes/"),
            ("/deck-passes/best/", "GET /deck-passes/best/"),
            ("/leeches/", "GET /leeches/"),
            ("/srs/settings/", "GET /srs/settings/"),
        ]
        for path, route in self.rng.sample(reads, self.rng.randint(2, 5)):
            if not self.pause(1.0, 3.0):
                return
            self.client.call("GET", path, route)
            if route == "GET /explorer/{slug}/" and world.regions:
                region = self.rng.choice(world.regions)
                self.client.call(
                    "POST",
                    f"/explorer/{world.scene}/regions/{region}/visits/",
                    "POST /explorer/{slug}/regions/{region}/visits/",
                    {"client_visit_id": str(uuid.uuid4())},
                )

    # A pipeline submission, polled until graded or the run ends (the report waits for the rest).
    def submit(self) -> None:
        body = {"code": self.rng.choice(self.world.submission_codes), "client_submission_id": str(uuid.uuid4())}
        path = f"/exercises/{SUBMISSION_EXERCISE}/submissions/"
        created = self.client.call("POST", path, "POST /exercises/{slug}/submissions/", body)
        if created is None:
            return
        submission = Submitted(id=created["id"], sent_at=time.monotonic())
        self.client.recorder.submitted(submission)
        while self.running():
            time.sleep(max(0.0, min(SUBMISSION_POLL_SECONDS, self.deadline - time.monotonic())))
            current = self.client.call("GET", f"/submissions/{submission.id}/", "GET /submissions/{id}/")
            if current is not None and submission_update(submission, current):
                return


def submission_update(submission: Submitted, current: dict[str, Any]) -> bool:
    """Note a submission's status; True once it is graded (or failed)."""
    submission.status, submission.verdict = current["status"], current["verdict"]
    if current["status"] in ("done", "failed"):
        submission.done_at = submission.done_at or time.monotonic()
        return True
    return False


# --- Running and reporting -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOptions:
    learners: int
    seconds: float
    think: float
    submissions: int
    ramp_seconds: float


@dataclass
class Run:
    recorder: Recorder
    plan: SubmissionPlan
    started: float
    ended: float = 0.0


def learners_run(*, world: World, emails: list[str], options: RunOptions, recorder: Recorder) -> Run:
    """Every learner in its own thread until the run's time is over; returns when all have stopped."""
    rng = random.Random(20261201)
    started = time.monotonic()
    deadline = started + options.seconds
    # Submissions land in the middle of the run, after the learners have all arrived.
    window = (min(options.ramp_seconds, options.seconds * 0.5), options.seconds * 0.8)
    plan = SubmissionPlan([started + rng.uniform(*window) for _ in range(options.submissions)])
    learners = [
        Learner(
            index=i,
            email=email,
            world=world,
            client=Client(world.port, recorder),
            deadline=deadline,
            think=options.think,
            start_delay=options.ramp_seconds * i / max(1, len(emails)),
            plan=plan,
        )
        for i, email in enumerate(emails)
    ]
    with ThreadPoolExecutor(max_workers=len(learners), thread_name_prefix="learner") as pool:
        for future in [pool.submit(learner.run) for learner in learners]:
            future.result()
    return Run(recorder=recorder, plan=plan, started=started, ended=time.monotonic())


def _p(values: list[float], quantile: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * quantile))] if ordered else float("nan")


def report(run: Run, *, title: str) -> None:
    """Print throughput, latency per route, the errors, and the study latency and error targets."""
    samples = run.recorder.samples
    seconds = run.ended - run.started
    by_route: dict[str, list[Sample]] = {}
    for sample in samples:
        by_route.setdefault(sample.route, []).append(sample)
    print(f"\n== {title}: {len(samples)} requests in {seconds:.0f} s = {len(samples) / seconds:.1f} requests/s")
    print(f"{'route':<50} {'count':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>6}  statuses")
    for route, group in sorted(by_route.items(), key=lambda item: -len(item[1])):
        latencies = [sample.ms for sample in group if sample.status]
        statuses: dict[int, int] = {}
        for sample in group:
            statuses[sample.status] = statuses.get(sample.status, 0) + 1
        shown = " ".join(f"{status or 'none'}x{count}" for status, count in sorted(statuses.items()))
        print(
            f"{route:<50} {len(group):>6} {_p(latencies, 0.5):>8.1f} {_p(latencies, 0.99):>8.1f} "
            f"{max(latencies, default=float('nan')):>8.1f} {sum(s.error for s in group):>6}  {shown}"
        )
    errors = [sample for sample in samples if sample.error]
    timeouts = sum(1 for sample in errors if sample.status == 0)
    server_errors = sum(1 for sample in errors if sample.status >= 500)
    provoked = sum(1 for sample in samples if sample.provoked)
    print(
        f"errors: {len(errors)} ({server_errors} 5xx, {timeouts} timeouts or connection errors, "
        f"{len(errors) - server_errors - timeouts} unexpected 4xx); deliberately provoked 4xx: {provoked}"
    )
    for example in run.recorder.error_examples:
        print(f"  {example}")
    if run.recorder.failures:
        print(f"LEARNERS STOPPED by an answer they could not read: {len(run.recorder.failures)}")
        for failure in run.recorder.failures[:5]:
            print(f"  {failure}")
    study = [sample.ms for sample in samples if sample.route == "GET /decks/{slug}/study/" and sample.status]
    p50, p99 = _p(study, 0.5), _p(study, 0.99)
    ratio = p99 / p50 if study else float("nan")
    print(
        f"study ({len(study)} requests) p50 {p50:.1f} ms, p99 {p99:.1f} ms: p99/p50 {ratio:.1f} "
        f"(target <= 4: {'met' if ratio <= 4 else 'MISSED'}); errors and timeouts "
        f"(target 0: {'met' if not errors and not run.recorder.failures else 'MISSED'})"
    )


def gradings_report(run: Run, *, server: Server, drain_seconds: float) -> None:
    """Wait (up to `drain_seconds`) for submissions still grading, then print how each went."""
    submissions = run.recorder.submissions
    during = sum(1 for s in submissions if s.done_at is not None and s.done_at <= run.ended)
    client = Client(server.port, Recorder())
    client.token = staff_token()
    deadline = time.monotonic() + drain_seconds
    while any(s.done_at is None for s in submissions) and time.monotonic() < deadline:
        for submission in (s for s in submissions if s.done_at is None):
            current = client.call("GET", f"/submissions/{submission.id}/", "GET /submissions/{id}/")
            if current is not None:
                submission_update(submission, current)
        time.sleep(SUBMISSION_POLL_SECONDS)
    client.close()
    after = sum(1 for s in submissions if s.done_at is not None)
    print(
        f"gradings: {run.plan.planned} planned, {len(submissions)} submitted ({run.plan.unclaimed} not reached "
        f"before the end), {during} finished during the run, {after} after waiting up to {drain_seconds:.0f} s more"
    )
    for s in submissions:
        if s.done_at is not None:
            outcome = f"{s.status} ({s.verdict or 'no verdict'})"
            print(f"  submission {s.id}: {outcome} {s.done_at - s.sent_at:.0f} s after sending")
        else:
            print(f"  submission {s.id}: still {s.status} {time.monotonic() - s.sent_at:.0f} s after sending")


def staff_token() -> str:
    """The token of a staff user, who sees every learner's submissions."""
    from django.contrib.auth import get_user_model

    from apps.accounts.devices import device_token_issue

    staff, _ = get_user_model().objects.get_or_create(
        username="bench-staff", defaults={"email": "staff@bench.example", "is_staff": True}
    )
    return device_token_issue(user=staff, device_name="Benchmark").key


def warmup_grading(*, world: World, server: Server, worker: Worker) -> float:
    """One grading before the clock starts: the worker's warm sandbox is up and the exercise's data exist."""
    client = Client(server.port, Recorder())
    client.token = staff_token()
    started = time.monotonic()
    body = {"code": world.submission_codes[-1]}
    created = client.call("POST", f"/exercises/{SUBMISSION_EXERCISE}/submissions/", "warm-up", body)
    if created is None:
        raise RuntimeError(f"the warm-up submission was refused: {client.recorder.error_examples}")
    submission = Submitted(id=created["id"], sent_at=started)
    while time.monotonic() - started < WARMUP_GRADING_SECONDS:
        current = client.call("GET", f"/submissions/{submission.id}/", "warm-up")
        if current is not None and submission_update(submission, current):
            break
        time.sleep(1.0)
    client.close()
    if submission.status != "done" or submission.verdict != "accepted":
        raise RuntimeError(
            f"the warm-up grading ended {submission.status} ({submission.verdict}); the worker's log ends:\n"
            f"{log_tail(worker.log_path)}"
        )
    return time.monotonic() - started


@dataclass
class Stack:
    world: World
    emails: list[str]
    server: Server
    worker: Worker


@contextmanager
def stack_up(*, learners: int) -> Iterator[Stack]:
    """The database with the course and the learners, Redis, the web server and a warmed-up Celery worker."""
    started = time.monotonic()
    with bench_database() as database:
        course = course_load()
        emails = learners_create(learners)
        token = staff_token()
        print(
            f"database {database.rsplit('/', 1)[-1]}: migrated; course: {course}; {learners} learners "
            f"({time.monotonic() - started:.0f} s)"
        )
        with redis_server() as redis:
            env = production_env(database=database, redis=redis, **unthrottled())
            with (
                celery_worker(env=env) as worker,
                web_server(env=env, token=token) as server,
            ):
                world = world_read(server.port)
                print(f"web: {web_describe()}; worker: celery, queues default,gpu, "
                      f"concurrency 1; Redis: private; {os.cpu_count()} CPUs")  # fmt: skip
                took = warmup_grading(world=world, server=server, worker=worker)
                print(f"warm-up grading ({SUBMISSION_EXERCISE}, expert reference): accepted in {took:.0f} s")
                yield Stack(world=world, emails=emails, server=server, worker=worker)


def arguments_parse(description: str, *, seconds: bool) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--learners", type=int, default=50)
    if seconds:
        parser.add_argument("--seconds", type=float, default=120.0, help="length of the measured run")
        parser.add_argument("--submissions", type=int, default=3, help="pipeline submissions in the whole run")
    else:
        parser.add_argument("--minutes", type=float, default=30.0, help="length of the soak")
        parser.add_argument("--submissions", type=int, help="pipeline submissions (default: one per 5 minutes)")
        parser.add_argument("--interval", type=float, default=30.0, help="seconds between memory samples")
    parser.add_argument("--think", type=float, default=1.0, help="scale of the learners' think times")
    parser.add_argument("--ramp", type=float, default=20.0, help="seconds over which the learners arrive")
    parser.add_argument(
        "--drain", type=float, default=300.0, help="seconds to wait after the run for gradings still going"
    )
    return parser.parse_args()


def main() -> None:
    args = arguments_parse(__doc__.splitlines()[0] if __doc__ else "", seconds=True)
    options = RunOptions(
        learners=args.learners,
        seconds=args.seconds,
        think=args.think,
        submissions=args.submissions,
        ramp_seconds=min(args.ramp, args.seconds / 4),
    )
    with stack_up(learners=args.learners) as stack:
        print(
            f"run: {options.learners} learners arriving over {options.ramp_seconds:.0f} s, {options.seconds:.0f} s, "
            f"think x{options.think}, {options.submissions} submissions; load {os.getloadavg()[0]:.1f}"
        )
        run = learners_run(world=stack.world, emails=stack.emails, options=options, recorder=Recorder())
        report(run, title=f"{options.learners} learners")
        gradings_report(run, server=stack.server, drain_seconds=args.drain)
        print(f"load average after the run: {os.getloadavg()[0]:.1f}")
        if any(sample.status >= 500 for sample in run.recorder.samples):
            print(f"web server log ends:\n{log_tail(stack.server.log_path)}")


if __name__ == "__main__":
    main()

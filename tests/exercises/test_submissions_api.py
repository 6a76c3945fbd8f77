"""The submission endpoints: 202 and a URL to follow, clear 4xx for bad input, and each learner
sees only their own submissions."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from apps.content.models import PipelineExercise
from apps.exercises import services
from apps.exercises.models import Submission, SubmissionStatus
from tests.support.api import assert_error, client_for
from tests.support.reviews import run_together
from worker.limits import MAX_CODE_BYTES

pytestmark = pytest.mark.django_db

URL = "/api/v1/exercises/tfrecord-image-pipeline/submissions/"
CODE = "import tensorflow as tf\n\n\ndef build_pipeline(files):\n    return tf.data.TFRecordDataset(files)\n"


def test_submit_returns_202_with_the_submission_url_and_queues_one_grading(
    learner_client, shipped_course, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = learner_client.post(URL, {"code": CODE}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    submission = Submission.objects.get()
    assert body == {
        "id": submission.pk,
        "url": f"http://testserver/api/v1/submissions/{submission.pk}/",
        "status": "queued",
        "client_submission_id": None,
        "duplicate": False,
    }
    assert response["Location"] == body["url"]
    assert submission.code == CODE and submission.status == SubmissionStatus.QUEUED
    assert len(callbacks) == 1

    detail = learner_client.get(body["url"]).json()
    assert detail["status"] == "queued" and detail["progress"] == 0.0
    assert detail["exercise"] == "tfrecord-image-pipeline" and detail["result"] is None and detail["verdict"] == ""


def test_code_over_64_kib_is_refused_and_nothing_is_stored(learner_client, shipped_course):
    code = "#" * (MAX_CODE_BYTES - 1) + "\n"
    error = assert_error(learner_client.post(URL, {"code": code + "é"}, format="json"), 413, "code_too_large")
    assert error["fields"] == {"code": [f"At most {MAX_CODE_BYTES} bytes."]}
    assert not Submission.objects.exists()


@pytest.mark.parametrize("payload", [{}, {"code": ""}, {"code": 42}, {"code": "   \n"}, {"code": None}])
def test_missing_or_empty_code_is_a_400(learner_client, shipped_course, payload):
    error = assert_error(learner_client.post(URL, payload, format="json"), 400, "invalid")
    assert "code" in error["fields"]
    assert not Submission.objects.exists()


def test_unknown_or_archived_exercise_is_a_404(learner_client, shipped_course):
    assert_error(
        learner_client.post("/api/v1/exercises/no-such/submissions/", {"code": CODE}, format="json"), 404, "not_found"
    )
    PipelineExercise.objects.filter(slug="tfrecord-image-pipeline").update(archived=True)
    assert_error(learner_client.post(URL, {"code": CODE}, format="json"), 404, "not_found")
    assert not Submission.objects.exists()


def test_anonymous_requests_are_refused(api_client, shipped_course):
    assert_error(api_client.post(URL, {"code": CODE}, format="json"), 401, "not_authenticated")
    assert_error(api_client.get("/api/v1/submissions/"), 401, "not_authenticated")


@override_settings(SUBMISSIONS_PER_MINUTE=3)
def test_too_many_submissions_a_minute_is_a_429_with_retry_after(learner, learner_client, shipped_course):
    for _ in range(3):
        assert learner_client.post(URL, {"code": CODE}, format="json").status_code == 202
    response = learner_client.post(URL, {"code": CODE}, format="json")
    error = assert_error(response, 429, "throttled")
    assert "At most 3 submissions a minute" in error["message"]
    assert 1 <= int(response["Retry-After"]) <= 61
    assert Submission.objects.count() == 3
    # Another learner has their own allowance.
    other = get_user_model().objects.create_user(username="linus", password="a long passphrase here")
    assert client_for(other).post(URL, {"code": CODE}, format="json").status_code == 202


def test_learners_see_only_their_own_submissions_and_staff_see_all(learner, learner_client, staff_user, shipped_course):
    other = get_user_model().objects.create_user(username="linus", password="a long passphrase here")
    mine = learner_client.post(URL, {"code": CODE}, format="json").json()["id"]
    theirs = client_for(other).post(URL, {"code": CODE + "\n"}, format="json").json()["id"]

    listed = learner_client.get("/api/v1/submissions/").json()
    assert [item["id"] for item in listed["results"]] == [mine]
    assert_error(learner_client.get(f"/api/v1/submissions/{theirs}/"), 404, "not_found")

    staff = client_for(staff_user)
    assert [item["id"] for item in staff.get("/api/v1/submissions/").json()["results"]] == [theirs, mine]
    assert staff.get(f"/api/v1/submissions/{theirs}/").json()["learner"] == "linus"
    assert staff.get("/api/v1/submissions/?exercise=many-file-interleave").json()["results"] == []
    assert len(staff.get("/api/v1/submissions/?status=queued").json()["results"]) == 2
    assert_error(staff.get("/api/v1/submissions/?status=lost"), 400, "invalid")


def test_a_graded_submission_shows_its_result(learner, learner_client, shipped_course):
    exercise = PipelineExercise.objects.get(slug="tfrecord-image-pipeline")
    result = {
        "verdict": "wrong_output",
        "message": "The examples come out in file order.",
        "checks": [{"name": "shuffled", "passed": False, "message": "The examples come out in file order."}],
        "timing": None,
        "speedup": None,
        "score": {"total": 0.0, "max": 100.0, "correctness": 0.0, "speed": 0.0, "speed_timed": False},
        "lint": [{"rule": "no-final-prefetch", "line": 5, "message": "End with prefetch."}],
        "device": "CPU",
        "output": "",
    }
    submission = Submission.objects.create(
        learner=learner,
        exercise=exercise,
        code=CODE,
        status=SubmissionStatus.DONE,
        verdict="wrong_output",
        score=0.0,
        result=result,
        progress=1.0,
        attempts=1,
    )
    body = learner_client.get(f"/api/v1/submissions/{submission.pk}/").json()
    assert body["status"] == "done" and body["verdict"] == "wrong_output" and body["result"] == result


# --- client_submission_id: a retry is answered, never graded twice ---------------------------------


def test_a_retried_submission_is_a_200_with_the_first_one_and_is_not_graded_again(
    learner_client, shipped_course, django_capture_on_commit_callbacks
):
    key = str(uuid.uuid4())
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        first = learner_client.post(URL, {"code": CODE, "client_submission_id": key}, format="json")
        Submission.objects.update(status=SubmissionStatus.RUNNING)
        retry = learner_client.post(URL, {"code": CODE, "client_submission_id": key}, format="json")

    assert (first.status_code, retry.status_code) == (202, 200), retry.content
    submission = Submission.objects.get()
    assert first.json() == {
        "id": submission.pk,
        "url": f"http://testserver/api/v1/submissions/{submission.pk}/",
        "status": "queued",
        "client_submission_id": key,
        "duplicate": False,
    }
    # The submission as it is now: a client following a retry sees the grading it started.
    assert retry.json() == {**first.json(), "status": "running", "duplicate": True}
    assert retry["Location"] == first["Location"] == first.json()["url"]
    assert len(callbacks) == 1


@override_settings(SUBMISSIONS_PER_MINUTE=2)
def test_a_retry_is_answered_at_the_limit_and_does_not_count_against_it(learner, learner_client, shipped_course):
    key = str(uuid.uuid4())
    assert learner_client.post(URL, {"code": CODE, "client_submission_id": key}, format="json").status_code == 202
    assert learner_client.post(URL, {"code": CODE + "\n"}, format="json").status_code == 202

    for _ in range(3):
        retry = learner_client.post(URL, {"code": CODE, "client_submission_id": key}, format="json")
        assert retry.status_code == 200 and retry.json()["duplicate"] is True

    assert_error(learner_client.post(URL, {"code": CODE + "#"}, format="json"), 429, "throttled")
    assert Submission.objects.count() == 2


def test_a_retry_still_succeeds_after_the_exercise_is_archived(learner_client, shipped_course):
    key = str(uuid.uuid4())
    first = learner_client.post(URL, {"code": CODE, "client_submission_id": key}, format="json").json()
    PipelineExercise.objects.filter(slug="tfrecord-image-pipeline").update(archived=True)
    retry = learner_client.post(URL, {"code": CODE, "client_submission_id": key}, format="json")
    assert retry.status_code == 200 and retry.json()["id"] == first["id"]


def test_an_id_reused_with_other_code_or_exercise_is_a_409_that_stores_nothing(learner, learner_client, shipped_course):
    key = str(uuid.uuid4())
    assert learner_client.post(URL, {"code": CODE, "client_submission_id": key}, format="json").status_code == 202
    before = list(Submission.objects.values())

    other_code = learner_client.post(URL, {"code": CODE + "\n", "client_submission_id": key}, format="json")
    other_exercise = learner_client.post(
        "/api/v1/exercises/many-file-interleave/submissions/",
        {"code": CODE, "client_submission_id": key},
        format="json",
    )

    error = assert_error(other_code, 409, "idempotency_key_reused")
    assert set(error["fields"]) == {"code"} and key in error["message"]
    assert set(assert_error(other_exercise, 409, "idempotency_key_reused")["fields"]) == {"exercise"}
    assert list(Submission.objects.values()) == before
    # Another learner's ids are their own.
    other = get_user_model().objects.create_user(username="linus", password="a long passphrase here")
    assert client_for(other).post(URL, {"code": CODE, "client_submission_id": key}, format="json").status_code == 202


@pytest.mark.parametrize("bad", ["not-a-uuid", "", None, 7.5, ["x"]])
def test_a_malformed_client_submission_id_is_a_400(learner_client, shipped_course, bad):
    response = learner_client.post(URL, {"code": CODE, "client_submission_id": bad}, format="json")
    assert "client_submission_id" in assert_error(response, 400, "invalid")["fields"]
    assert not Submission.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_one_submission_retried_at_once_is_stored_and_queued_once(learner, shipped_course, monkeypatch):
    queued: list[int] = []
    # Counts what would be queued instead of sending it to the broker: no grading runs in this test.
    monkeypatch.setattr(services, "job_publish_after_commit", lambda kind, submission: queued.append(submission.pk))
    key = uuid.uuid4()

    results = run_together(
        4,
        lambda _: services.submission_create(
            learner=learner, exercise_slug="tfrecord-image-pipeline", code=CODE, client_submission_id=key
        ),
    )

    assert sorted(created for _, created in results) == [False, False, False, True]
    assert len({submission.pk for submission, _ in results}) == 1
    assert Submission.objects.count() == 1
    assert queued == [results[0][0].pk]

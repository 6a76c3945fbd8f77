"""Every setting reads the environment one way: unset or blank is the default, a malformed value stops the start."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from quizsite.env import env_bool, env_float, env_int, env_list, env_path, env_str
from tests.support.paths import REPO_ROOT


@pytest.mark.parametrize("value", [None, "", "   "])
def test_unset_or_blank_means_the_default_for_every_type(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("QUIZSITE_TEST_SETTING", raising=False)
    else:
        monkeypatch.setenv("QUIZSITE_TEST_SETTING", value)
    assert env_str("QUIZSITE_TEST_SETTING", "fallback") == "fallback"
    assert env_int("QUIZSITE_TEST_SETTING", 7) == 7
    assert env_float("QUIZSITE_TEST_SETTING", 0.5) == 0.5
    assert env_bool("QUIZSITE_TEST_SETTING", True) is True
    assert env_list("QUIZSITE_TEST_SETTING", ["a"]) == ["a"]
    assert env_path("QUIZSITE_TEST_SETTING", Path("/x")) == Path("/x")


def test_values_are_read_as_their_type(monkeypatch):
    monkeypatch.setenv("QUIZSITE_TEST_SETTING", " 12 ")
    assert env_int("QUIZSITE_TEST_SETTING", 0) == 12
    assert env_float("QUIZSITE_TEST_SETTING", 0.0) == 12.0
    assert env_str("QUIZSITE_TEST_SETTING", "") == "12"
    monkeypatch.setenv("QUIZSITE_TEST_SETTING", "Off")
    assert env_bool("QUIZSITE_TEST_SETTING", True) is False
    monkeypatch.setenv("QUIZSITE_TEST_SETTING", "a, ,b")
    assert env_list("QUIZSITE_TEST_SETTING", []) == ["a", "b"]


@pytest.mark.parametrize(
    ("reader", "value", "default"), [(env_int, "1.5", 0), (env_float, "fast", 0.0), (env_bool, "maybe", False)]
)
def test_a_malformed_value_names_the_variable(monkeypatch, reader, value, default):
    monkeypatch.setenv("QUIZSITE_TEST_SETTING", value)
    with pytest.raises(ImproperlyConfigured, match="QUIZSITE_TEST_SETTING"):
        reader("QUIZSITE_TEST_SETTING", default)


def test_the_settings_read_the_environment_only_through_these_readers():
    settings_source = (REPO_ROOT / "quizsite" / "settings.py").read_text()
    assert "os.environ" not in settings_source

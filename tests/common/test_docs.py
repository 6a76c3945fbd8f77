"""What the docs name still exists: relative links and their headings, paths, modules, commands and their
flags, make targets, management commands, and the counts a page states (read from the course files).

Each check reads every Markdown page of the project; a failure names the page, the line and the name."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.paths import REPO_ROOT

PAGES = sorted(
    [
        REPO_ROOT / "README.md",
        *(REPO_ROOT / "docs").rglob("*.md"),
        REPO_ROOT / "decks" / "SCHEMA.md",
        REPO_ROOT / "apps" / "web" / "frontend" / "README.md",
    ]
)
# The project's own top-level folders: a backticked name starting with one of them is a path of the project.
TOP_LEVEL = ("apps/", "bench/", "decks/", "docs/", "quizsite/", "requirements/", "scripts/", "tests/", "worker/")
ROOT_FILES = {
    "Makefile",
    "manage.py",
    "pyproject.toml",
    "README.md",
    ".env.example",
    "Procfile.dev",
    ".ci/run",
    "requirements.txt",
}
# Made at run time, not kept in the repository (decks/media/ is COURSE_MEDIA_DIR: made when a course ships media).
GENERATED = ("var/", ".venv/", "apps/web/static/web/", "decks/media/")
# A backticked word ending so is a file's name, not a module.
FILE_SUFFIXES = (".txt", ".py", ".md", ".in", ".yaml", ".yml", ".toml", ".conf", ".json", ".sh")
# Dotted names that are not modules: the web app's localStorage keys.
NOT_MODULES = {"quizsite.token", "quizsite.me", "quizsite.theme"}

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
MODULE_COMMAND = re.compile(r"python -m ([a-z_][\w.]*)((?:\s+[^\s`]+)*)")
MAKE_TARGET = re.compile(r"\bmake ([a-z][\w-]*)")
DEV_SCRIPT = re.compile(r"sh scripts/dev\.sh ([a-z][\w-]*)")
MANAGE = re.compile(r"manage\.py ([a-z_]+)")
DOTTED_MODULE = re.compile(r"^(?:apps|quizsite|worker|bench|tests)(?:\.[a-z_][a-z0-9_]*)+$")


def lines_of(page: Path) -> Iterator[tuple[int, str]]:
    """Each line outside fenced code blocks' language tags, numbered from 1 (fenced code is read too)."""
    yield from enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)


def where(page: Path, number: int) -> str:
    return f"{page.relative_to(REPO_ROOT)}:{number}"


def heading_anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    in_fence = False
    for _, line in lines_of(page):
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_every_page_is_found():
    assert len(PAGES) >= 15, PAGES
    assert all(page.exists() for page in PAGES)


def test_relative_links_and_their_headings_exist():
    broken = []
    for page in PAGES:
        for number, line in lines_of(page):
            for match in LINK.finditer(line):
                target = match.group(1) or match.group(2)
                if re.match(r"^[a-z]+:", target):
                    continue  # http(s), mailto: not the project's to keep
                path_part, _, anchor = target.partition("#")
                resolved = (page.parent / path_part).resolve() if path_part else page
                if not resolved.exists():
                    broken.append(f"{where(page, number)}: {target} (no such file)")
                elif anchor and resolved.suffix == ".md" and anchor not in heading_anchors(resolved):
                    broken.append(f"{where(page, number)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def _named_paths() -> Iterator[tuple[Path, int, str]]:
    for page in PAGES:
        for number, line in lines_of(page):
            for match in CODE.finditer(line):
                for word in match.group(1).split():
                    word = word.strip("(),;:'\"")
                    word = re.sub(r":\d+$", "", word)  # a line number after a path
                    if word.startswith(GENERATED) or any(mark in word for mark in "*{}<>$…[]"):
                        continue
                    if word.startswith(TOP_LEVEL) or word in ROOT_FILES:
                        yield page, number, word


def test_named_paths_exist():
    missing = [
        f"{where(page, number)}: {word}"
        for page, number, word in _named_paths()
        if not (REPO_ROOT / word).exists() and not (page.parent / word).exists()
    ]
    assert not missing, "\n".join(missing)


def test_named_modules_exist():
    missing = []
    for page in PAGES:
        for number, line in lines_of(page):
            for match in CODE.finditer(line):
                for word in match.group(1).split():
                    word = word.strip("(),;:'\"")
                    if word.endswith(FILE_SUFFIXES):
                        continue  # a file's name (`worker.txt`), checked as a path where it is one
                    if DOTTED_MODULE.match(word) and word not in NOT_MODULES and not _module_or_attribute_exists(word):
                        missing.append(f"{where(page, number)}: {word}")
    assert not missing, "\n".join(missing)


def _module_or_attribute_exists(dotted: str) -> bool:
    """A module, a name defined in one (`apps.common.publish.tasks_publish`), or a task's name, which a module
    spells out in full (`apps.accounts.tasks.account_email_send`): found without importing anything."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        module = ".".join(parts[:split])
        if _module_file(module) is None:
            continue
        rest = parts[split:]
        if not rest:
            return True
        source = _module_file(module).read_text(encoding="utf-8")  # type: ignore[union-attr]
        if _spelled_out(dotted):
            return True
        return re.search(rf"^\s*(?:def|class|async def)?\s*{re.escape(rest[0])}\b", source, re.M) is not None
    return False


def _spelled_out(name: str) -> bool:
    """Whether some module of the project holds `name` as a string (a task's registered name)."""
    quoted = (f'"{name}"', f"'{name}'")
    return any(
        any(q in path.read_text(encoding="utf-8") for q in quoted)
        for folder in ("apps", "quizsite", "worker")
        for path in (REPO_ROOT / folder).rglob("*.py")
    )


def _module_file(module: str) -> Path | None:
    base = REPO_ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def _module_commands() -> Iterator[tuple[Path, int, str, list[str]]]:
    """`python -m module --flag …` as the docs write them: the module and the flags it is given."""
    for page in PAGES:
        for number, line in lines_of(page):
            for match in MODULE_COMMAND.finditer(line):
                flags = [word.split("=")[0] for word in match.group(2).split() if word.startswith("--")]
                yield page, number, match.group(1), flags


def test_commands_name_modules_and_flags_that_exist():
    wrong = []
    for page, number, module, flags in _module_commands():
        path = _module_file(module)
        if path is None and importlib.util.find_spec(module.split(".")[0]) is None:
            wrong.append(f"{where(page, number)}: python -m {module} (no such module)")
            continue
        if path is None:
            continue  # a library's own command (python -m pip …)
        source = path.read_text(encoding="utf-8")
        wrong += [
            f"{where(page, number)}: python -m {module} {flag} (the module reads no such flag)"
            for flag in flags
            if f'"{flag}"' not in source and f"'{flag}'" not in source
        ]
    assert not wrong, "\n".join(wrong)


def test_make_targets_and_dev_script_commands_exist():
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    dev_script = (REPO_ROOT / "scripts" / "dev.sh").read_text(encoding="utf-8")
    commands = set(re.findall(r"^\s+([a-z][\w-]*)\) ", dev_script, re.M))
    commands_used = {"manage", "python"} | {"run", "test"}
    assert {"run", "test", "test-fast"} <= targets
    wrong = []
    for page in PAGES:
        for number, line in lines_of(page):
            for match in CODE.finditer(line):
                wrong += [
                    f"{where(page, number)}: make {target}"
                    for target in MAKE_TARGET.findall(match.group(1))
                    if target not in targets
                ]
                wrong += [
                    f"{where(page, number)}: sh scripts/dev.sh {command}"
                    for command in DEV_SCRIPT.findall(match.group(1))
                    if command not in commands | (commands_used & commands)
                ]
    assert not wrong, "\n".join(wrong)


def test_management_commands_exist():
    known = {path.stem for path in REPO_ROOT.glob("apps/*/management/commands/*.py")}
    known |= {"migrate", "createsuperuser", "shell", "collectstatic", "check", "makemigrations", "runserver"}
    known |= {"changepassword", "dbshell", "showmigrations", "flush", "sendtestemail", "test", "spectacular"}
    wrong = [
        f"{where(page, number)}: manage.py {command}"
        for page in PAGES
        for number, line in lines_of(page)
        for command in MANAGE.findall(line)
        if command not in known
    ]
    assert not wrong, "\n".join(wrong)


def _course() -> dict:
    return yaml.safe_load((REPO_ROOT / "decks" / "tensorflow-ai-phd.yaml").read_text(encoding="utf-8"))


def _quiz_question_count(slug: str) -> Callable[[], int]:
    def count() -> int:
        for lesson in _course()["lessons"]:
            for quiz in lesson.get("quizzes", []):
                if quiz["slug"] == slug:
                    return len(quiz["questions"])
        raise AssertionError(f"no quiz {slug}")

    return count


def _quiz_count() -> int:
    return sum(len(lesson.get("quizzes", [])) for lesson in _course()["lessons"])


def _exercise_count() -> int:
    return sum(len(lesson.get("exercises", [])) for lesson in _course()["lessons"])


WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
# Counts the pages state, each with what it counts: (page, a pattern whose group is the number, the count).
COUNTS: list[tuple[str, str, Callable[[], int]]] = [
    (
        "docs/games-and-quizzes.md",
        r"`tf-data-pipelines-review` \(all (\d+)\)",
        _quiz_question_count("tf-data-pipelines-review"),
    ),
    (
        "docs/games-and-quizzes.md",
        r"`tf-data-page-check` \(the course page's (\w+) questions\)",
        _quiz_question_count("tf-data-page-check"),
    ),
    (
        "docs/games-and-quizzes.md",
        r"`tf-data-section-checkpoints` \(the manual's (\w+) inline",
        _quiz_question_count("tf-data-section-checkpoints"),
    ),
    ("docs/benchmarks.md", r"the references of all (\w+) stored first", _exercise_count),
    ("docs/games-and-quizzes.md", r"shipped lesson has (\w+):", _quiz_count),
]


@pytest.mark.parametrize(("page", "pattern", "count"), COUNTS, ids=[f"{p}:{pat[:30]}" for p, pat, _ in COUNTS])
def test_stated_counts_are_the_course_files_counts(page, pattern, count):
    text = " ".join((REPO_ROOT / page).read_text(encoding="utf-8").split())  # a sentence may break a line
    stated = re.findall(pattern, text)
    assert stated, f"{page} no longer states this count: {pattern}"
    for number in stated:
        assert int(WORDS.get(number, number)) == count(), f"{page}: {number} ({pattern})"


@pytest.mark.slow
@pytest.mark.parametrize(
    "module", sorted({module for _, _, module, _ in _module_commands() if module.startswith(("bench.", "quizsite."))})
)
def test_each_command_the_docs_give_answers_help(module):
    """`python -m module --help` prints its usage and exits 0: nothing the docs send a reader to crashes."""
    result = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DJANGO_DEBUG": "true"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage" in result.stdout.lower(), result.stdout[-2000:]

"""Rules of the code's layout that import-linter cannot state: private names stay in their module, and test
modules share code only through tests/support."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import REPO_ROOT

PROJECT_PACKAGES = ("apps", "worker", "quizsite")


def imports_of(path: Path) -> Iterator[tuple[str, str]]:
    """(module, name) for each `from module import name` at any depth of the file; name is "" for `import module`."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""


def python_files(*folders: str) -> list[Path]:
    return [path for folder in folders for path in sorted((REPO_ROOT / folder).rglob("*.py"))]


def private_name_imports(paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(REPO_ROOT)}: {module}.{name}"
        for path in paths
        for module, name in imports_of(path)
        if module.startswith(PROJECT_PACKAGES) and name.startswith("_") and not name.startswith("__")
    ]


def test_no_module_imports_a_private_name_from_another():
    assert python_files(*PROJECT_PACKAGES), "no files found: the walk is broken"
    assert private_name_imports(python_files(*PROJECT_PACKAGES)) == []


def test_the_check_finds_a_private_import(tmp_path):
    module = tmp_path / "borrower.py"
    module.write_text("from apps.srs.reviews.services import _Read\n")
    found = [name for source, name in imports_of(module) if source.startswith(PROJECT_PACKAGES)]
    assert found == ["_Read"]


def test_test_modules_import_other_test_code_only_from_tests_support():
    borrowed = [
        f"{path.relative_to(REPO_ROOT)}: {module}"
        for path in python_files("tests", "bench")
        for module, _ in imports_of(path)
        if (module.startswith("tests.") and not module.startswith("tests.support")) or module == "tests"
    ]
    assert borrowed == []
    support = [
        f"{path.relative_to(REPO_ROOT)}: {module}"
        for path in python_files("tests/support")
        for module, name in imports_of(path)
        if (module + "." + name).startswith("tests.") and not module.startswith("tests.support")
    ]
    assert support == []

"""Reading course files: YAML with a line number for every path, and errors that point at lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

# libyaml's parser is about ten times faster than the pure-Python one and reports the same marks.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Location = tuple[str | int, ...]

# Course files nest a handful of levels. Composing a document recurses once per level (libyaml's
# composer in C overflows its stack and kills the process at about 100,000), so deeper nesting is
# refused from the parser's events, which are read without recursion, before anything is composed.
MAX_NESTING = 64


@dataclass(frozen=True, order=True)
class ContentError:
    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path or '(top level)'}: {self.message}"


class ContentFilesInvalid(Exception):
    """One or more files break the rules; nothing was written."""

    def __init__(self, errors: list[ContentError]) -> None:
        self.errors = sorted(errors)
        super().__init__("\n".join(str(error) for error in self.errors))


@dataclass(frozen=True)
class ContentSource:
    name: str
    text: str


@dataclass
class ParsedFile:
    name: str
    data: Any
    lines: dict[Location, int] = field(default_factory=dict)

    def line_for(self, location: Location) -> int | None:
        """The line of the path, or of its nearest ancestor that is in the file."""
        for end in range(len(location), -1, -1):
            line = self.lines.get(location[:end])
            if line is not None:
                return line
        return None

    def error(self, location: Location, message: str) -> ContentError:
        return ContentError(self.name, self.line_for(location), format_location(location), message)


def format_location(location: Location) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _index_nodes(
    node: yaml.Node, location: Location, lines: dict[Location, int], errors: list[tuple[Location, int, str]]
) -> None:
    lines[location] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                errors.append((location, line, f"key {key!r} appears twice (first on line {seen[key]})"))
            seen[key] = line
            _index_nodes(value_node, (*location, key), lines, errors)
            # A key's own line reads better than its value's for block scalars.
            lines[(*location, key)] = line
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index_nodes(item, (*location, index), lines, errors)


def _too_deep_at(text: str) -> int | None:
    """The line where the nesting first goes deeper than MAX_NESTING; None when it never does."""
    depth = 0
    for event in yaml.parse(text, Loader=SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                mark = event.start_mark
                return mark.line + 1 if mark is not None else 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return None


def parse_source(source: ContentSource) -> tuple[ParsedFile | None, list[ContentError]]:
    loader = SafeLoader(source.text)
    try:
        too_deep = _too_deep_at(source.text)
        if too_deep is not None:
            return None, [ContentError(source.name, too_deep, "", f"nested more than {MAX_NESTING} levels deep")]
        node = loader.get_single_node()
        if node is None:
            return None, [ContentError(source.name, None, "", "the file is empty")]
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        reason = " ".join(part for part in (exc.context, exc.problem) if part)
        return None, [ContentError(source.name, line, "", f"not valid YAML: {reason}")]
    except yaml.YAMLError as exc:
        return None, [ContentError(source.name, None, "", f"not valid YAML: {exc}")]
    finally:
        loader.dispose()

    parsed = ParsedFile(source.name, data)
    duplicate_keys: list[tuple[Location, int, str]] = []
    _index_nodes(node, (), parsed.lines, duplicate_keys)
    errors = [
        ContentError(source.name, line, format_location(location), message)
        for location, line, message in duplicate_keys
    ]
    if not isinstance(data, dict):
        errors.append(parsed.error((), "the top level must be a mapping of course fields"))
    return parsed, errors

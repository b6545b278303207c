"""Which paths git would ignore: the ``.gitignore`` files (and ``.git/info/exclude``) in
force along the walk of esqlog index, matched as git matches them.

Why a module of its own: the rules (git's precedence, folder-only patterns, an ignore
file that is not a regular file) are one concept, tested against git itself, apart from
what the walk does with the answer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: (reason, path) -> None: how a skipped ignore file is counted (WalkReport.skip)
Skip = Callable[[str, str], None]


class Ignores:
    """The .gitignore rules in force in one directory: (base, patterns) from outermost in.

    Matched as git matches each path it walks past, not as
    ``pathspec.GitIgnoreSpec.check_file`` matches a whole path: within one file the last
    pattern matching *this entry* decides. GitIgnoreSpec also counts a match of a parent
    folder (``!a/b/`` re-included ``a/b/no.txt`` that ``a/**`` ignores) and ranks file
    patterns over folder ones (so ``!a/b/`` after ``a/**`` lost), and it matched ``a/**``
    against the folder ``a`` itself (git: only what is inside), so nothing below ``a``
    could be re-included. A parent folder that is ignored is not walked into, which is
    git's "a file of an excluded folder cannot be re-included".
    """

    def __init__(self, specs: tuple[tuple[str, tuple[tuple[Any, bool], ...]], ...] = ()) -> None:
        self.specs = specs

    def add(self, base: str, lines: list[str]) -> Ignores:
        patterns = tuple(
            p for p in map(_pattern, lines) if p is not None and p[0].include is not None
        )
        if not patterns:
            return self
        return Ignores((*self.specs, (base, patterns)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """git's precedence: the deepest file with a matching rule decides, its last rule."""
        for base, patterns in reversed(self.specs):
            if base and not rel.startswith(base + "/"):
                continue
            local = rel[len(base) + 1 :] if base else rel
            entry = local + "/" if is_dir else local
            for pattern, folders_only in reversed(patterns):
                if (is_dir or not folders_only) and _names_entry(pattern.regex.match(entry), entry):
                    return bool(pattern.include)
        return False


def _pattern(line: str) -> tuple[Any, bool] | None:
    """A compiled pattern, and whether it names folders only; None for a line git ignores
    as it cannot be a pattern (a lone ``!``, a trailing ``\\``: black's own test data holds
    such files, and pathspec raises on them). ``X/**/`` is compiled as ``X/**`` restricted
    to folders: pathspec makes it ``X/`` itself (the folder, not the folders inside it,
    which is what git matches)."""
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    text = line.rstrip()
    try:
        if text.endswith("/**/") and not text.endswith("\\/**/"):
            return GitIgnoreSpecPattern(text[:-1]), True
        return GitIgnoreSpecPattern(line), False
    except ValueError:  # pathspec's GitIgnorePatternError
        return None


def _names_entry(match: re.Match[str] | None, entry: str) -> bool:
    """Whether a pattern's regex match is a match of the entry itself (git's test), not
    of a folder above it. pathspec's regexes are prefix matches: the ``ps_d`` group is the
    slash after a matched folder (the entry's own trailing slash when the entry is that
    folder); a match without it either ends at ``$`` (the entry) or is a ``dir/**``
    prefix, which matches what is below ``dir/`` and not ``dir/`` itself."""
    if match is None:
        return False
    if "ps_d" in match.re.groupindex and match.group("ps_d") is not None:
        return match.end("ps_d") == len(entry)
    if match.end() == len(entry):
        return not entry.endswith("/")
    return True


#: the largest ignore file read (git itself refuses those over 100 MB); a bigger one is
#: not a list of patterns, and reading it would only fill memory
MAX_IGNORE_BYTES = 1 << 20
IGNORE_FILE_SKIPPED = "ignore file not read (not a regular file, or over 1 MB)"


def read_ignore_lines(path: Path, skip: Skip | None = None, shown: str = "") -> list[str]:
    """An ignore file's lines; nothing when it is missing. One that is a symlink, a FIFO,
    a device or over MAX_IGNORE_BYTES is not read at all (a symlink to /dev/zero filled
    memory, a FIFO hung the run) and is counted as a skip."""
    from esqlog.atomic import read_regular_file
    from esqlog.errors import UsageError

    try:
        os.lstat(path)
    except OSError:
        return []
    try:
        raw = read_regular_file(path, MAX_IGNORE_BYTES, "ignore file", "", follow_symlinks=False)
    except UsageError:
        if skip is not None:
            skip(IGNORE_FILE_SKIPPED, shown or path.name)
        return []
    return raw.decode("utf-8", errors="replace").splitlines()


def outer_ignores(root: Path, skip: Skip) -> tuple[Ignores, str]:
    """Rules from the repository's top down to PATH (PATH may be a sub-folder of a repo);
    the second value is PATH's path relative to that top."""
    ignores = Ignores()
    top = next((d for d in [root, *root.parents] if (d / ".git").exists()), None)
    if top is None:
        return ignores, ""
    exclude = top / ".git" / "info" / "exclude"
    ignores = ignores.add("", read_ignore_lines(exclude, skip, str(exclude)))
    prefix = root.relative_to(top).as_posix()
    prefix = "" if prefix == "." else prefix
    parts = prefix.split("/") if prefix else []
    for depth in range(len(parts)):
        base = "/".join(parts[:depth])
        outer = top.joinpath(*parts[:depth], ".gitignore")
        ignores = ignores.add(base, read_ignore_lines(outer, skip, str(outer)))
    return ignores, prefix

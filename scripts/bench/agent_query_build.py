"""The agent-query benchmark's queries, built from a checkout's own text and history.

Every query is real text of the repository: a definition's name (symbol), its package or
module path and name as agents write them (dotted), a stack frame in the language's own
format at a line inside it (frame), a string literal it raises (error), the commit message
of a fix commit (bug) and the first sentence of its doc comment with its name taken out
(how). Names that do not exist (missing) are real names of the other repositories that
``rg`` finds nowhere in this one. The gold comes from agent_query_defs (language parsers)
and, for bug reports, from the fix's diff (``git diff -U0``) mapped onto the functions that
still carry the changed function's name at HEAD.
"""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path
from typing import Any

from scripts.bench.agent_query_defs import Defn, go_module, go_package, java_package
from scripts.bench.localize.build_tasks import (
    clean_message,
    git,
    git_bytes,
    is_source,
    subject_reason,
)
from scripts.bench.localize.spans import spans

STYLES = ("symbol", "dotted", "frame", "error", "bug", "how", "missing")
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def gold_of(*defs: Defn) -> list[dict[str, Any]]:
    return [
        {"path": d.path, "start_line": d.start, "end_line": d.end, "line": d.line, "symbol": d.qual}
        for d in defs
    ]


def python_module(path: str) -> str:
    """``src/black/linegen.py`` -> ``black.linegen``; ``httpx/__init__.py`` -> ``httpx``."""
    parts = path.removesuffix(".py").split("/")
    if parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def python_frame(path: str, line: int, name: str) -> str:
    return f'File "{path}", line {line}, in {name}'


def go_frame(import_path: str, qual: str, pointer: bool, file_path: str, line: int) -> str:
    """``github.com/gin-gonic/gin.(*Context).Next(...)`` and its ``file:line`` line."""
    if "." in qual:
        recv, name = qual.split(".", 1)
        func = f"(*{recv}).{name}" if pointer else f"{recv}.{name}"
    else:
        func = qual
    return f"{import_path}.{func}(...)\n\t{file_path}:{line}"


def java_frame(package: str, qual: str, file_name: str, line: int, constructor: bool) -> str:
    """``at com.squareup.javapoet.TypeSpec$Builder.build(TypeSpec.java:500)``."""
    cls, name = qual.rsplit(".", 1)
    method = "<init>" if constructor else name
    prefix = f"{package}." if package else ""
    return f"at {prefix}{cls.replace('.', '$')}.{method}({file_name}:{line})"


def without_name(sentence: str, name: str) -> str:
    """The doc sentence with the function's name (and a call or qualified form) removed."""
    pattern = r"`?(?:[\w.]+\.)?" + re.escape(name) + r"(?:\(\))?`?"
    text = re.sub(r"(?<![\w.])" + pattern + r"(?!\w)", " ", sentence)
    return re.sub(r"\s+([.,;:])", r"\1", " ".join(text.split()))


class Builder:
    """The queries of one repository (``tree`` its HEAD checkout, ``gitdir`` its history)."""

    def __init__(self, name: str, tree: Path, gitdir: str, defs: list[Defn], seed: str):
        self.name, self.tree, self.gitdir, self.defs = name, tree, gitdir, defs
        self.rng = random.Random(f"{seed}:{name}")
        self.module = go_module(tree)
        self._source: dict[str, str] = {}

    def source(self, path: str) -> str:
        if path not in self._source:
            self._source[path] = (self.tree / path).read_text(errors="replace")
        return self._source[path]

    def sample(self, items: list[Any], n: int) -> list[Any]:
        items = list(items)
        self.rng.shuffle(items)
        return items[:n]

    def query(self, style: str, text: str, gold: list[dict[str, Any]]) -> dict[str, Any]:
        return {"repo": self.name, "style": style, "query": text, "gold": gold}

    def named(self) -> list[Defn]:
        return [
            d
            for d in self.defs
            if len(d.name) >= 4 and not d.name.startswith("__") and not self.constructor(d)
        ]

    @staticmethod
    def constructor(d: Defn) -> bool:
        parts = d.qual.split(".")
        return d.lang == "java" and len(parts) > 1 and parts[-1] == parts[-2]

    def symbols(self, n: int) -> list[dict[str, Any]]:
        by_name: dict[str, list[Defn]] = {}
        for d in self.named():
            by_name.setdefault(d.name, []).append(d)
        return [
            self.query("symbol", name, gold_of(*by_name[name]))
            for name in self.sample(sorted(by_name), n)
        ]

    def dotted_name(self, d: Defn) -> str | None:
        if d.lang == "python":
            module = python_module(d.path)
            top = module.split(".")[0]
            init = next(
                (
                    p
                    for p in (f"{top}/__init__.py", f"src/{top}/__init__.py")
                    if (self.tree / p).exists()
                ),
                None,
            )
            head = d.qual.split(".")[0]
            public = init and re.search(rf"\b{re.escape(head)}\b", self.source(init))
            return f"{top if public else module}.{d.qual}"
        if d.lang == "go":
            pkg = go_package(self.source(d.path))
            return None if pkg in ("", "main") else f"{pkg}.{d.qual}"
        pkg = java_package(self.source(d.path))
        return f"{pkg}.{d.qual}" if pkg else None

    def dotted(self, n: int) -> list[dict[str, Any]]:
        out = []
        for d in self.sample(self.named(), 4 * n):
            text = self.dotted_name(d)
            if text and len(out) < n:
                out.append(self.query("dotted", text, gold_of(d)))
        return out

    def frame_of(self, d: Defn) -> str | None:
        line = self.rng.randint(d.line + 1, d.end) if d.end > d.line else d.line
        if d.lang == "python":
            return python_frame(d.path, line, d.name)
        if d.lang == "go":
            if not self.module:
                return None
            folder = d.path.rsplit("/", 1)[0] if "/" in d.path else ""
            imp = f"{self.module}/{folder}" if folder else self.module
            base = self.module.rsplit("/", 1)[-1]
            return go_frame(imp, d.qual, d.pointer, f"{base}/{d.path}", line)
        return java_frame(
            java_package(self.source(d.path)),
            d.qual,
            d.path.rsplit("/", 1)[-1],
            line,
            self.constructor(d),
        )

    def frames(self, n: int) -> list[dict[str, Any]]:
        funcs = [
            d
            for d in self.defs
            if d.kind in ("function", "method") and not d.name.startswith("__") and d.end > d.line
        ]
        out = []
        for d in self.sample(funcs, 2 * n):
            text = self.frame_of(d)
            if text and len(out) < n:
                out.append(self.query("frame", text, gold_of(d)))
        return out

    def errors(self, n: int) -> list[dict[str, Any]]:
        from scripts.bench.agent_query_defs import strip_format

        by_text: dict[str, list[Defn]] = {}
        for d in self.defs:
            for raw in d.errors:
                text = strip_format(raw)
                if len(text.split()) >= 3 and len(text) >= 15:
                    by_text.setdefault(text, []).append(d)
        return [
            self.query("error", text, gold_of(*by_text[text]))
            for text in self.sample(sorted(by_text), n)
        ]

    def hows(self, n: int) -> list[dict[str, Any]]:
        out = []
        funcs = [d for d in self.defs if d.kind in ("function", "method") and d.doc]
        for d in self.sample(funcs, len(funcs)):
            text = without_name(d.doc, d.name)
            if len(text.split()) >= 5 and len(out) < n:
                out.append(self.query("how", text, gold_of(d)))
        return out

    def bugs(self, n: int, lang: str) -> list[dict[str, Any]]:
        log = git(self.gitdir, "log", "--no-merges", "--format=%H%x00%P%x00%an%x00%s", "HEAD")
        cands = []
        for line in log.splitlines():
            h, parents, author, subject = ([*line.split("\x00"), "", "", ""])[:4]
            if (
                len(parents.split()) == 1
                and re.search(r"\bfix", subject, re.I)
                and not subject_reason(subject, author)
            ):
                cands.append((h, parents))
        out = []
        for h, parent in self.sample(cands, len(cands)):
            if len(out) >= n:
                break
            message = clean_message(git(self.gitdir, "log", "-1", "--format=%B", h))
            if len(message.split()) < 4:
                continue  # only an issue reference: nothing of the bug is left to ask
            gold = self.fix_gold(h, parent, lang)
            if 1 <= len(gold) <= 3:
                out.append(self.query("bug", message, gold) | {"commit": h})
        return out

    def fix_gold(self, commit: str, parent: str, lang: str) -> list[dict[str, Any]]:
        """Functions the fix changed (at the fix commit), located at HEAD by file and name."""
        files = [
            f
            for f in git(self.gitdir, "diff", "--name-only", parent, commit).split()
            if is_source(f, lang)
        ]
        gold: list[dict[str, Any]] = []
        for f in files:
            if not (self.tree / f).exists():
                continue
            diff = git(self.gitdir, "diff", "-U0", parent, commit, "--", f)
            ranges = [(int(a), int(a) + max(int(b or 1), 1) - 1) for a, b in HUNK.findall(diff)]
            after = spans(f, git_bytes(self.gitdir, "show", f"{commit}:{f}")) or []
            changed = {s for s, a, b in after if any(a <= y and x <= b for x, y in ranges)}
            head = {s: (a, b) for s, a, b in spans(f, (self.tree / f).read_bytes()) or []}
            gold += [
                {
                    "path": f,
                    "start_line": head[s][0],
                    "end_line": head[s][1],
                    "line": head[s][0],
                    "symbol": s,
                }
                for s in sorted(changed)
                if s in head
            ]
        return gold

    def missing(self, n: int, others: list[str]) -> list[dict[str, Any]]:
        names = sorted(
            {
                x
                for x in others
                if len(x) >= 8 and ("_" in x.strip("_") or re.search(r"[a-z][A-Z]", x))
            }
        )
        out = []
        for name in self.sample(names, len(names)):
            if len(out) >= n:
                break
            found = subprocess.run(["rg", "-q", "-F", "-i", name, "."], cwd=self.tree)
            if found.returncode == 1:
                out.append(self.query("missing", name, []))
        return out

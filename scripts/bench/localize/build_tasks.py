"""Localization tasks from real repository histories: commit message -> changed functions.

Each task is a non-merge commit of a public repository whose message describes the change
and whose diff modifies 1-4 functions or methods in the repository's non-test source files.
The query is the commit message as its developer wrote it (trailers and issue references
removed); the gold is those functions, located at the parent commit (the tree an agent
would search before making the change).

    python -m scripts.bench.localize.build_tasks \
        --repo go:cobra=/work/.mirror/spf13+cobra/repo \
        --repo python:click=/work/.mirror/pallets+click/repo ... \
        --out data/localize

Rules (every drop is counted in meta.json under its reason):

* commits reachable from HEAD in [--since, --until), non-merge, in first-parent or not;
* subject of at least 4 words, not a release/version bump/typo/formatting/lint/dependency
  or merge commit, not a revert, not from a bot;
* source files = files of the repository's language (.go, .py, .java) outside test code
  (``*_test.go``, ``test_*.py``, ``*_test.py``, ``conftest.py``, ``*Test(s).java``,
  ``*IT.java`` and any directory whose name contains "test") and outside docs/ and
  examples/ directories;
* the commit modifies at least one source file that exists at the parent (commits that
  only add files, or touch only tests/docs, go);
* gold = outermost functions/methods of the parent's version of those files (spans.py)
  having a line that a ``git diff -U0`` hunk deletes or replaces, or strictly inside which
  a hunk inserts lines; 1-4 of them, else dropped;
* selection: the qualifying commits of a repository are sorted by commit time, cut into
  --per-repo equal consecutive slices, and one commit is drawn from each slice with a
  seeded generator (``random.Random(f"{seed}:{repo}")``), so tasks spread over the
  history in proportion to its activity.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from scripts.bench.localize.spans import spans

EXT = {"go": ".go", "python": ".py", "java": ".java"}

SKIP_SUBJECT = re.compile(
    r"""\b(bump(ed|s)?|release[ds]?|releasing|prepare\s+(for\s+)?(the\s+)?(next\s+)?(release|version)|
    version\s+\d|v?\d+\.\d+(\.\d+)?\s*$|typos?|spelling|misspell\w*|gofmt|gofumpt|(fix|code|run|apply)\s+format\w*|format\w*\s+(code|fix(es)?)|
    goimports|reformat\w*|lint(er|ing|s)?|golangci|black|isort|flake8|ruff|pre-commit|
    dependabot|deps?\b|dependenc(y|ies)|changelog|changes\.rst|copyright|license|whitespace|
    merge)\b""",
    re.IGNORECASE | re.VERBOSE,
)
TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(-by|-Id|-id)?:\s", re.ASCII)
KNOWN_TRAILERS = re.compile(
    r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|"
    r"suggested-by|helped-by|cc|change-id|closes|fixes|fix|resolves|refs?|see|"
    r"related|issue|pr|git-svn-id|piperorigin-revid|merged-by)\s*:",
    re.IGNORECASE,
)
ISSUE_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?(?:(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|see|related(?: to)?|"
    r"part of|addresses|for|issue)\s*:?\s*)?(?:[\w.-]+/[\w.-]+)?#\d+[\s.,;]*"
    r"(?:(?:and|,)?\s*(?:[\w.-]+/[\w.-]+)?#\d+[\s.,;]*)*$",
    re.IGNORECASE,
)
ISSUE_URL_LINE = re.compile(
    r"^\s*(?:(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|see)\s*:?\s*)?"
    r"https?://github\.com/\S+/(?:issues|pull)/\d+\S*\s*$",
    re.IGNORECASE,
)
ISSUE_INLINE = re.compile(
    r"\s*\(?(?:(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+)(?:[\w.-]+/[\w.-]+)?#\d+\)?",
    re.IGNORECASE,
)
PR_SUFFIX = re.compile(r"\s*\((?:[\w.-]+/[\w.-]+)?#\d+\)\s*$")
BOT = re.compile(r"\[bot\]|dependabot|renovate|pre-commit-ci|github-actions", re.IGNORECASE)


def git(gitdir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", gitdir, *args], check=True, capture_output=True
    ).stdout.decode("utf-8", "replace")


def git_bytes(gitdir: str, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", gitdir, *args], check=True, capture_output=True
    ).stdout


def is_source(path: str, lang: str) -> bool:
    if not path.endswith(EXT[lang]):
        return False
    parts = path.split("/")
    name = parts[-1]
    for d in parts[:-1]:
        low = d.lower()
        if "test" in low or low in (
            "docs",
            "examples",
            "example",
            "_examples",
            "vendor",
            "third_party",
            "testdata",
        ):
            return False
    if lang == "go":
        return not name.endswith("_test.go")
    if lang == "python":
        return not (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")
    return not re.search(r"(Test|Tests|IT|TestCase)\.java$", name)


def clean_message(message: str) -> str:
    """The commit message without trailers and issue references, otherwise verbatim."""
    lines = message.rstrip().split("\n")
    # drop the trailer block (and any known trailer line anywhere)
    kept = [ln for ln in lines if not KNOWN_TRAILERS.match(ln.strip())]
    while kept and (not kept[-1].strip() or TRAILER.match(kept[-1].strip())):
        kept.pop()
    out = []
    for i, ln in enumerate(kept):
        if ISSUE_LINE.match(ln) or ISSUE_URL_LINE.match(ln):
            continue
        if i == 0:
            ln = PR_SUFFIX.sub("", ln)
            ln = re.sub(r"^\s*issue\s*#\d+\s*:\s*", "", ln, flags=re.IGNORECASE)
        stripped = ISSUE_INLINE.sub("", ln)
        if stripped != ln:
            # "Fix #1702: Gson.toJson ..." -> "Gson.toJson ..."
            stripped = re.sub(r"^[\s:;,.-]+", "", stripped)
        ln = stripped
        out.append(ln.rstrip())
    text = "\n".join(out).strip()
    return re.sub(r"\n{3,}", "\n\n", text)


def subject_reason(subject: str, author: str) -> str | None:
    if BOT.search(author) or BOT.search(subject):
        return "bot"
    if subject.lower().startswith("revert"):
        return "revert"
    if len(subject.split()) < 4:
        return "short subject"
    if SKIP_SUBJECT.search(subject):
        return "release/bump/typo/format/deps subject"
    return None


HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def old_hunks(diff: str) -> dict[str, list[tuple[int, int]]]:
    """Per old path: (start, count) of each -U0 hunk on the old side (count 0 = insertion
    after line start)."""
    out: dict[str, list[tuple[int, int]]] = {}
    path: str | None = None
    for ln in diff.split("\n"):
        if ln.startswith("--- "):
            path = ln[6:] if ln.startswith("--- a/") else None
        elif ln.startswith("@@") and path is not None:
            m = HUNK.match(ln)
            if m:
                start = int(m.group(1))
                count = 1 if m.group(2) is None else int(m.group(2))
                out.setdefault(path, []).append((start, count))
    return out


def touched(span: tuple[str, int, int], hunks: list[tuple[int, int]]) -> bool:
    _, s, e = span
    for start, count in hunks:
        if count == 0:
            # insertion after old line `start`: inside when s <= start < e
            if s <= start < e:
                return True
        elif start <= e and start + count - 1 >= s:
            return True
    return False


def commit_task(
    gitdir: str, repo: str, lang: str, sha: str, parent: str, drops: Counter[str]
) -> list[dict[str, Any]] | None:
    names = git(gitdir, "diff", "--name-status", "--no-renames", parent, sha).split("\n")
    modified, changed_source = [], False
    for row in names:
        if not row.strip():
            continue
        status, *paths = row.split("\t")
        path = paths[-1]
        if is_source(path, lang):
            changed_source = True
            if status.startswith("M"):
                modified.append(path)
    if not changed_source:
        drops["no source file changed (tests/docs/other only)"] += 1
        return None
    if not modified:
        drops["source changes only add or delete files"] += 1
        return None
    diff = git(gitdir, "diff", "-U0", "--no-renames", "--no-color", parent, sha, "--", *modified)
    hunks = old_hunks(diff)
    gold = []
    for path in modified:
        if path not in hunks:
            continue
        source = git_bytes(gitdir, "show", f"{parent}:{path}")
        found = spans(path, source)
        if found is None:
            drops["parent file does not parse"] += 1
            return None
        for span in found:
            if touched(span, hunks[path]):
                gold.append(
                    {"path": path, "symbol": span[0], "start_line": span[1], "end_line": span[2]}
                )
    if not gold:
        drops["no function body changed"] += 1
        return None
    if len(gold) > 4:
        drops["more than 4 functions changed"] += 1
        return None
    return gold


def candidates(
    gitdir: str, repo: str, lang: str, since: str, until: str, drops: Counter[str]
) -> list[dict[str, Any]]:
    sep = "\x1e"
    log = git(
        gitdir,
        "log",
        "--no-merges",
        f"--since={since}",
        f"--until={until}",
        f"--format={sep}%H%x1f%P%x1f%ct%x1f%an <%ae>%x1f%B",
        "HEAD",
    )
    out = []
    for record in log.split(sep)[1:]:
        sha, parents, ct, author, body = record.split("\x1f", 4)
        drops["commits in range"] += 1
        plist = parents.split()
        if len(plist) != 1:
            drops["root commit"] += 1
            continue
        message = clean_message(body)
        subject = message.split("\n", 1)[0] if message else ""
        reason = subject_reason(subject, author)
        if reason:
            drops[reason] += 1
            continue
        gold = commit_task(gitdir, repo, lang, sha, plist[0], drops)
        if gold is None:
            continue
        drops["qualifying"] += 1
        out.append(
            {
                "repo": repo,
                "commit": sha,
                "parent": plist[0],
                "time": int(ct),
                "message": message,
                "gold": gold,
                "language": lang,
            }
        )
    out.sort(key=lambda t: (t["time"], t["commit"]))
    return out


def pick(tasks: list[dict[str, Any]], k: int, seed: int, repo: str) -> list[dict[str, Any]]:
    if len(tasks) <= k:
        return list(tasks)
    rng = random.Random(f"{seed}:{repo}")
    chosen = []
    n = len(tasks)
    for i in range(k):
        lo, hi = i * n // k, (i + 1) * n // k
        chosen.append(tasks[rng.randrange(lo, hi)])
    return chosen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--repo",
        action="append",
        required=True,
        help="LANG:NAME=GITDIR (repeatable), e.g. go:cobra=/path/to/cobra.git",
    )
    ap.add_argument("--since", default="2021-12-01")
    ap.add_argument("--until", default="2026-12-01")
    ap.add_argument("--per-repo", type=int, default=32)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--out", default="data/localize")
    args = ap.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    all_tasks, meta = (
        [],
        {
            "since": args.since,
            "until": args.until,
            "per_repo": args.per_repo,
            "seed": args.seed,
            "repos": {},
        },
    )
    for spec in args.repo:
        lang, rest = spec.split(":", 1)
        name, gitdir = rest.split("=", 1)
        drops: Counter[str] = Counter()
        cands = candidates(gitdir, name, lang, args.since, args.until, drops)
        chosen = pick(cands, args.per_repo, args.seed, name)
        for t in chosen:
            t["task_id"] = f"{name}-{t['commit'][:10]}"
        all_tasks.extend(chosen)
        head = git(gitdir, "rev-parse", "HEAD").strip()
        meta["repos"][name] = {
            "language": lang,
            "gitdir": gitdir,
            "head": head,
            "counts": dict(drops),
            "qualifying": len(cands),
            "tasks": len(chosen),
            "first_task_time": min((t["time"] for t in chosen), default=None),
            "last_task_time": max((t["time"] for t in chosen), default=None),
            "gold_functions": sum(len(t["gold"]) for t in chosen),
        }
        print(
            f"{name:10s} {lang:6s} commits {drops['commits in range']:5d} "
            f"qualifying {len(cands):4d} tasks {len(chosen):3d}",
            file=sys.stderr,
        )
    meta["tasks"] = len(all_tasks)
    keys = ["task_id", "repo", "commit", "parent", "time", "message", "gold", "language"]
    with open(out / "tasks.jsonl", "w") as fh:
        for t in all_tasks:
            fh.write(json.dumps({k: t[k] for k in keys}) + "\n")
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{len(all_tasks)} tasks -> {out / 'tasks.jsonl'}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Run the localization tasks: tokens an agent reads until it sees the first changed function.

For each task (tasks.jsonl from build_tasks.py) the repository's tree at the task's parent
commit is materialised in one scratch folder per repository, moved commit by commit in time
order (Tree: only files whose blob changed are rewritten; the fetched git dir is only
read), and every method answers the commit message:

grep-seq
    The grep policy of an agent: up to 3 keywords from the message (keywords()), one
    ``rg -n --no-heading -i -w -F --sort path KW`` per keyword, outputs read in keyword
    order.
grep-ranked
    The same keywords in one ``rg`` call; files ordered by how many distinct keywords they
    match, then by matching lines, then path; each file's lines in order.
native
    A plain ``match`` query on ``content`` over the REST API (100 hits), each hit read as a
    ``path:a-b symbol`` line and its content, in rank order.
esqlog-boost / esqlog-identifiers
    ``esqlog mcp`` as a stdio MCP server (the ``mcp`` SDK's client), ``search_code`` called
    with its default arguments and ``query=<message>``; what the agent reads is the tool's
    text content. ``esqlog-*-16k`` variants pass ``max_tokens=16000``.
esqlog-auto
    The shipped defaults: ``esqlog mcp`` in mode auto with the ``index --calibrate``
    calibration. Its answer is a listing; a record carries ``listing_tokens`` (the listing
    up to the end of the first gold entry) and ``tokens`` (that plus the ``read_code``
    answer for the entry, ``read_code_tokens``).

The index ``esqlog-localize-<repo>`` is built afresh by ``esqlog index <tree> --calibrate``
at each parent; the identifiers mode's calibration comes from ``esqlog calibrate
--vocabulary --identifiers`` at the same tree.

Tokens are o200k_base (esqlog.agent.tokens.default_counter), counted over what the agent
reads, from the start up to and including the first line (grep) or hit (search) inside a
gold function's line range at the parent. One JSON line per (task, method) goes to
``data/localize/results-<label>.jsonl``; reruns skip the pairs already there.

    python -m scripts.bench.localize.run --label v1 --url http://127.0.0.1:19200 \
        --gitdir cobra=/work/.mirror/spf13+cobra/repo --gitdir click=... [--repos cobra] \
        [--max-per-repo 10] [--methods grep-seq,native,esqlog-boost]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esqlog.agent.tokens import default_counter
from scripts.bench.harness import add_url

BUDGETS = (2000, 4000, 8000, 16000)
#: stop reading an output (and call the gold unreached) past this many tokens
READ_CAP = 200_000
NATIVE_HITS = 100
METHODS = ("grep-seq", "grep-ranked", "native", "esqlog-boost", "esqlog-identifiers")

COUNTER = default_counter()


def count(text: str) -> int:
    return COUNTER.count(text) if text else 0


# --------------------------------------------------------------------------- the tree


def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


class Tree:
    """One scratch folder holding a repository's tree at one commit, moved commit by
    commit: only files whose blob changed are rewritten, removed ones deleted. Regular
    files only (symbolic links and submodules are left out, as esqlog index and rg skip
    them); a blob the fetched git dir lacks (mirrors may leave out their largest files)
    is left out and counted."""

    def __init__(self, gitdir: str, path: Path) -> None:
        self.gitdir, self.path = gitdir, path
        self.files: dict[str, str] = {}
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)

    def move(self, commit: str) -> dict[str, int]:
        listing = run(
            ["git", "--git-dir", self.gitdir, "ls-tree", "-r", "-z", "--full-tree", commit]
        ).stdout.decode("utf-8", "surrogateescape")
        new: dict[str, str] = {}
        for entry in listing.split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob" and mode in ("100644", "100755"):
                new[path] = sha
        for path in set(self.files) - set(new):
            (self.path / path).unlink(missing_ok=True)
        changed = [p for p, sha in new.items() if self.files.get(p) != sha]
        missing = 0
        if changed:
            batch = subprocess.run(
                ["git", "--git-dir", self.gitdir, "cat-file", "--batch"],
                input="".join(new[p] + "\n" for p in changed).encode(),
                capture_output=True,
                check=True,
            ).stdout
            pos = 0
            for p in changed:
                eol = batch.index(b"\n", pos)
                header = batch[pos:eol].split()
                pos = eol + 1
                target = self.path / p
                if len(header) < 3 or header[1] != b"blob":
                    missing += 1
                    target.unlink(missing_ok=True)
                    new.pop(p)
                    continue
                size = int(header[2])
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(batch[pos : pos + size])
                pos += size + 1
        self.files = new
        return {"files": len(new), "written": len(changed) - missing, "missing_blobs": missing}


def in_gold(gold: list[dict[str, Any]], path: str, start: int, end: int) -> bool:
    return any(
        g["path"] == path and start <= g["end_line"] and end >= g["start_line"] for g in gold
    )


def outcome(tokens: int | None) -> dict[str, bool]:
    return {str(b): tokens is not None and tokens <= b for b in BUDGETS}


# --------------------------------------------------------------------------- grep policy


def _words(text: str) -> set[str]:
    return set(text.split())


STOPWORDS = _words("""
a about above after again against all also an and any are as at be because been before
being below between both but by can could did do does doing don down during each else
few for from further had has have having he her here hers him his how however i if in
into is it its itself just let lets like may me might more most must my no nor not now of
off on once only or other our out over own same shall she should so some such than that
the their them then there these they this those through to too under until up upon us
very via was we were what when where which while who whom why will with would yet you
your instead without within rather still even ever already always never much many make
makes made making use used uses using add adds added adding fix fixes fixed fixing
change changes changed update updates updated remove removes removed support supports
allow allows allowed handle handles new old now one two way ways get set gets sets see
need needs needed case cases issue issues bug bugs pr wip minor small some thing things
work works working correct correctly properly proper better improve improves improved
ensure ensures possible able instead e g eg ie etc per since
""")

TOKEN = re.compile(
    r"`[^`\n]+`"
    r"|[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)*(?:\(\))?"
)
WORD = re.compile(r"[A-Za-z0-9_$]+")


def identifier_like(tok: str) -> bool:
    if "_" in tok or "$" in tok:
        return True
    if re.search(r"[a-z][A-Z]", tok) or re.search(r"[A-Z]{2,}[a-z]", tok):
        return True
    return bool(re.search(r"[A-Za-z]", tok) and re.search(r"\d", tok))


FILE_EXTENSIONS = _words(
    "go py java md rst txt yml yaml json toml cfg ini sh mod sum html "
    "js ts xml gradle properties kt c h"
)
URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
QUOTED = re.compile(r"(?<![A-Za-z0-9])['\"]([A-Za-z_$][A-Za-z0-9_$.-]*)['\"](?![A-Za-z0-9])")


def message_tokens(message: str) -> list[tuple[str, bool]]:
    """(token, is_identifier) in message order; a dotted a.b.c gives c, marked identifier;
    words in backticks or quotes, calls (``name()``) and capitalised words inside a sentence
    ("Fix After not run", "Prevent Response self-reference") count as identifiers; URLs are
    no keywords."""
    message = URL.sub(" ", message)
    message = QUOTED.sub(lambda m: f"`{m.group(1)}`", message)
    out = []
    for m in TOKEN.finditer(message):
        raw = m.group(0)
        quoted = raw.startswith("`")
        raw = raw.strip("`").removesuffix("()")
        called = m.group(0).endswith("()")
        parts = re.split(r"\.|::|->", raw)
        if quoted:
            words = WORD.findall(raw)
            if not words:
                continue
            # `foo(bar)` -> foo, `a.b` -> b, `utils.py` -> utils (a plain word)
            if len(parts) > 1 and parts[-1].lower() in FILE_EXTENSIONS:
                out.append(
                    (WORD.findall(parts[-2])[-1] if WORD.findall(parts[-2]) else words[0], False)
                )
            else:
                out.append((words[-1] if len(parts) > 1 else words[0], True))
            continue
        if len(parts) > 1:
            if parts[-1].lower() in FILE_EXTENSIONS:
                # a file name (docs.go, utils.py): its stem is a plain word
                out.append((parts[-2], False))
            else:
                out.append((parts[-1], True))
            continue
        before = message[: m.start()].rstrip(" \t\"'(")
        sentence_start = not before or before[-1] in ".!?:;\n*-#>"
        capitalised = raw[:1].isupper() and not raw.isupper() and not sentence_start
        out.append((raw, called or capitalised or identifier_like(raw)))
    return out


def file_word_sets(tree: Path) -> list[set[str]]:
    files = run(["rg", "--files", "--sort", "path"], cwd=tree).stdout.decode().split("\n")
    sets = []
    for f in files:
        if not f:
            continue
        try:
            text = (tree / f).read_text(errors="replace").lower()
        except OSError:
            continue
        sets.append(set(WORD.findall(text)))
    return sets


def keywords(message: str, word_sets: list[set[str]], k: int = 3) -> list[str]:
    """Identifier-like tokens first (message order), then the rarest other words by
    document frequency over the tree (ties: message order); no stopwords, >= 3 chars,
    only words that occur in the tree."""
    toks = message_tokens(message)
    seen: set[str] = set()
    idents: list[str] = []
    words: list[str] = []
    for tok, ident in toks:
        low = tok.lower()
        if len(tok) < 3 or low in seen or low in STOPWORDS or not re.search("[A-Za-z]", tok):
            continue
        seen.add(low)
        (idents if ident else words).append(tok)

    def df(w: str) -> int:
        lw = w.lower()
        return sum(1 for s in word_sets if lw in s)

    chosen = [t for t in idents if df(t) > 0][:k]
    if len(chosen) < k:
        scored = [(df(w), i, w) for i, w in enumerate(words)]
        scored = [s for s in scored if s[0] > 0]
        scored.sort()
        chosen += [w for _, _, w in scored[: k - len(chosen)]]
    return chosen


def rg_lines(tree: Path, kws: list[str]) -> list[tuple[str, int, str]]:
    args = [
        "rg",
        "-n",
        "--no-heading",
        "-i",
        "-w",
        "-F",
        "--sort",
        "path",
        "--null",
        "--color",
        "never",
    ]
    for kw in kws:
        args += ["-e", kw]
    p = subprocess.run(args, cwd=tree, capture_output=True)
    out = []
    for line in p.stdout.decode("utf-8", "replace").split("\n"):
        if "\0" not in line:
            continue
        path, rest = line.split("\0", 1)
        num, _, text = rest.partition(":")
        if num.isdigit():
            out.append((path, int(num), text))
    return out


def read_lines(
    lines: list[tuple[str, int, str]], gold: list[dict[str, Any]]
) -> tuple[int | None, int, int]:
    """(tokens to the first gold line or None, total tokens read, gold line's index)."""
    used = 0
    for i, (path, num, text) in enumerate(lines):
        used += count(f"{path}:{num}:{text}\n")
        if in_gold(gold, path, num, num):
            return used, used, i
        if used > READ_CAP:
            return None, used, -1
    return None, used, -1


def function_text(tree: Path, g: dict[str, Any]) -> str:
    lines = (tree / g["path"]).read_text(errors="replace").split("\n")
    return "".join(
        f"{n}\t{lines[n - 1]}\n" for n in range(g["start_line"], min(g["end_line"], len(lines)) + 1)
    )


def grep_seq(tree: Path, kws: list[str]) -> list[tuple[str, int, str]]:
    out = []
    for kw in kws:
        out += rg_lines(tree, [kw])
    return out


def grep_ranked(tree: Path, kws: list[str]) -> list[tuple[str, int, str]]:
    lines = rg_lines(tree, kws) if kws else []
    pats = [
        re.compile(r"(?<![A-Za-z0-9_])" + re.escape(k) + r"(?![A-Za-z0-9_])", re.I) for k in kws
    ]
    files: dict[str, list[tuple[str, int, str]]] = {}
    hit_kws: dict[str, set[int]] = {}
    for ln in lines:
        files.setdefault(ln[0], []).append(ln)
        hit_kws.setdefault(ln[0], set()).update(i for i, p in enumerate(pats) if p.search(ln[2]))
    order = sorted(files, key=lambda f: (-len(hit_kws[f]), -len(files[f]), f))
    return [ln for f in order for ln in files[f]]


# --------------------------------------------------------------------------- native BM25


def post(url: str, body: Any) -> Any:
    data = json.dumps(body).encode() if body is not None else b""
    req = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=300) as fh:
        return json.load(fh)


def delete_index(url: str, index: str) -> None:
    if not index.startswith("esqlog-localize-"):
        raise ValueError(f"refusing to delete {index!r}")
    req = urllib.request.Request(f"{url}/{index}", method="DELETE")
    try:
        urllib.request.urlopen(req, timeout=60).close()
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise


def native(url: str, index: str, message: str, gold: list[dict[str, Any]]) -> dict[str, Any]:
    body = {
        "query": {"match": {"content": message}},
        "size": NATIVE_HITS,
        "_source": ["content", "path", "symbol", "start_line", "end_line"],
    }
    req = urllib.request.Request(
        f"{url}/{index}/_search",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as fh:
        hits = json.load(fh)["hits"]["hits"]
    used = 0
    for rank, h in enumerate(hits, start=1):
        s = h["_source"]
        content = s.get("content") or ""
        start = int(s.get("start_line") or 1)
        end = int(s.get("end_line") or start)
        used += count(
            f"{s.get('path')}:{start}-{end} {s.get('symbol') or ''}\n"
            + content
            + ("" if content.endswith("\n") else "\n")
        )
        if in_gold(gold, s.get("path") or "", start, end):
            return {"tokens": used, "rank": rank, "hits": len(hits)}
    return {"tokens": None, "rank": None, "hits": len(hits), "total_tokens": used}


# --------------------------------------------------------------------------- esqlog MCP


@dataclass
class Hit:
    rank: int
    id: str | None
    path: str
    start: int
    end: int
    symbol: str | None
    end_offset: int  # character offset just past the hit's header line (listing) or block
    listing: bool  # only a header line: the agent must read_code it


HEADER = re.compile(
    r"^--- \[(?P<rank>\d+)\] id=(?P<id>\S+)(?: path=(?P<path>.+?))? "
    r"lines=(?P<a>\d+)-(?P<b>\d+)(?: symbol=(?P<sym>.+?))?(?: tokens=\d+)?\s*$"
)
#: a compact listing row: "[3] path/to/file.go:120-168 Symbol.name" (optionally "id=...")
LISTING = re.compile(
    r"^\s*(?:---\s*)?\[?(?P<rank>\d+)[\].)]\s+(?:id=(?P<id>\S+)\s+)?(?P<path>[^\s:]+):"
    r"(?P<a>\d+)-(?P<b>\d+)(?:\s+(?P<sym>\S+))?.*$"
)


def parse_hits(text: str) -> list[Hit]:
    """Hits of a search_code answer in reading order: '--- [rank] id=... path=...
    lines=a-b symbol=...' headers followed by the chunk (whole chunks), or one listing
    entry per hit ('N. path:a-b Symbol' and its indented signature and doc lines, when the
    answer's summary line names read_code: the default listing). Reading a listed hit costs
    a read_code call; its entry ends after its indented lines. The summary is the first
    line of an answer of esqlog before 2026-12-05 and the last one since; either way it
    is no part of an entry."""
    lines = text.split("\n")
    listing_answer = bool(lines) and any("read_code(path" in ln for ln in (lines[0], lines[-1]))
    offsets, pos = [], 0
    for ln in lines:
        offsets.append(pos)
        pos += len(ln) + 1
    found: list[tuple[int, re.Match[str]]] = []
    for i, ln in enumerate(lines):
        m = HEADER.match(ln) or LISTING.match(ln)
        if m:
            found.append((i, m))
    hits = []
    for j, (i, m) in enumerate(found):
        nxt = found[j + 1][0] if j + 1 < len(found) else len(lines)
        body = [ln for ln in lines[i + 1 : nxt] if ln.strip()]
        listing = listing_answer or not body
        if listing_answer:  # the entry's own lines are indented; the summary is not
            end_line = i + 1
            while end_line < nxt and lines[end_line].startswith(" "):
                end_line += 1
        else:
            end_line = i + 1 if listing else _block_end(lines, nxt)
        end_offset = offsets[end_line] if end_line < len(offsets) else len(text)
        hits.append(
            Hit(
                int(m.group("rank")),
                m.group("id"),
                m.group("path") or "",
                int(m.group("a")),
                int(m.group("b")),
                m.group("sym"),
                end_offset,
                listing,
            )
        )
    return hits


#: an answer's summary line (esqlog.agent.packing): hits shown, then what was left out
SUMMARY = re.compile(r"^\d+ (?:of \d+ )?hits? shown\b")


def _block_end(lines: list[str], nxt: int) -> int:
    """Where a whole-chunk block ends: at the next header, or before the answer's summary
    line when it is the last block."""
    if nxt == len(lines) and nxt and SUMMARY.match(lines[-1]):
        return nxt - 1
    return nxt


def _field(obj: Any, *names: str) -> Any:
    """An attribute under its SDK 2 (snake_case) or SDK 1 (camelCase) name."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


def tool_text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def esqlog_calls(
    url: str,
    index: str,
    calibration: Path,
    mode: str,
    calls: list[tuple[str, dict[str, Any]]],
    gold: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    exe = str(Path(sys.executable).with_name("esqlog"))
    params = StdioServerParameters(
        command=exe,
        args=[
            "mcp",
            "--url",
            url,
            "--index",
            index,
            "--calibration",
            str(calibration),
            "--mode",
            mode,
        ],
        env=dict(os.environ),
    )  # PYTHONPATH chooses the esqlog checkout
    out = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, args in calls:
            t0 = time.perf_counter()
            res = await session.call_tool("search_code", args)
            took = time.perf_counter() - t0
            text = tool_text(res)
            rec: dict[str, Any] = {
                "method": name,
                "is_error": bool(_field(res, "is_error", "isError")),
                "search_seconds": round(took, 3),
                "total_tokens": count(text),
            }
            sc = _field(res, "structured_content", "structuredContent")
            rec["structured_tokens"] = count(json.dumps(sc)) if sc else None
            hits = parse_hits(text)
            rec["hits"] = len(hits)
            rec["listing"] = any(h.listing for h in hits)
            rec["tokens"], rec["rank"] = None, None
            # two reading models: listing_tokens stops at the end of the first gold entry
            # (path, lines, symbol, signature: where the function is, as grep's line
            # shows it); tokens adds the read_code answer for that hit (the code, as
            # grep-*+read adds the function's lines)
            rec["listing_tokens"], rec["read_code_tokens"] = None, None
            for h in hits:
                if in_gold(gold, h.path, h.start, h.end):
                    used = count(text[: h.end_offset])
                    rec["listing_tokens"] = used
                    if h.listing:
                        read_args: dict[str, Any] = {"id": h.id} if h.id else {"path": h.path}
                        read_args |= {"start_line": h.start, "end_line": h.end}
                        got = await session.call_tool("read_code", read_args)
                        rec["read_code_tokens"] = count(tool_text(got))
                        used += rec["read_code_tokens"]
                    rec["tokens"], rec["rank"] = used, h.rank
                    break
            out.append(rec)
    return out


# --------------------------------------------------------------------------- driver


def esqlog_cli(*args: str) -> dict[str, Any]:
    exe = str(Path(sys.executable).with_name("esqlog"))
    p = run([exe, *args, "--json"])
    summary: dict[str, Any] = json.loads(p.stdout.decode())
    return summary


def esqlog_checkout() -> str:
    """The last git commit of the esqlog package that runs (the one PYTHONPATH selects), with
    "+dirty" when its esqlog/ folder differs from that commit."""
    import importlib.util

    spec = importlib.util.find_spec("esqlog")
    pkg = Path(spec.origin).parent if spec and spec.origin else Path(".")
    # the last commit that changed the package, not the checkout's HEAD (a benchmark
    # branch moves HEAD without changing esqlog)
    head = subprocess.run(
        ["git", "log", "-1", "--format=%H", "--", "."], cwd=pkg, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "."], cwd=pkg, capture_output=True, text=True
    ).stdout.strip()
    return f"{head}{'+dirty' if dirty else ''} ({pkg})"


def clean_calibration(path: Path) -> None:
    for f in path.parent.glob(path.stem + ".*"):
        f.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="data/localize/tasks.jsonl")
    ap.add_argument("--gitdir", action="append", required=True, help="REPO=GITDIR")
    add_url(ap)
    ap.add_argument("--label", required=True)
    ap.add_argument(
        "--index-tag",
        default="",
        help="inserted in the index names (esqlog-localize-<tag><repo>), so that "
        "a run can go beside another on the same node",
    )
    ap.add_argument("--out-dir", default="data/localize")
    ap.add_argument(
        "--work",
        default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "esqlog-localize-work"),
        help="scratch trees and calibrations, outside any git work tree (rg and "
        "esqlog index would apply its .gitignore)",
    )
    ap.add_argument("--repos", default="", help="comma-separated subset of repositories")
    ap.add_argument(
        "--methods",
        default=",".join(METHODS),
        help="comma list; esqlog-<mode>-16k adds max_tokens=16000",
    )
    ap.add_argument(
        "--max-per-repo",
        type=int,
        default=0,
        help="only the first N tasks of each repository in time order "
        "(spread: every len/N-th task)",
    )
    args = ap.parse_args()

    gitdirs = dict(g.split("=", 1) for g in args.gitdir)
    methods = [m for m in args.methods.split(",") if m]
    tasks = [json.loads(ln) for ln in Path(args.tasks).read_text().splitlines() if ln]
    repos = [
        r
        for r in dict.fromkeys(t["repo"] for t in tasks)
        if not args.repos or r in args.repos.split(",")
    ]
    out_path = Path(args.out_dir) / f"results-{args.label}.jsonl"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out_path.exists():
        for ln in out_path.read_text().splitlines():
            r = json.loads(ln)
            done.add((r["task_id"], r["method"]))
    main_commit = esqlog_checkout()
    bench_commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent
    ).stdout.strip()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    for repo in repos:
        rtasks = sorted(
            (t for t in tasks if t["repo"] == repo), key=lambda t: (t["time"], t["commit"])
        )
        if args.max_per_repo and len(rtasks) > args.max_per_repo:
            n, k = len(rtasks), args.max_per_repo
            rtasks = [rtasks[i * n // k] for i in range(k)]
        index = f"esqlog-localize-{args.index_tag}{repo}"
        tree = work / "trees" / repo
        scratch: Tree | None = None
        cal_dir = work / "cal"
        cal_dir.mkdir(exist_ok=True)
        cal_boost, cal_ident = cal_dir / f"{repo}.boost.json", cal_dir / f"{repo}.ident.json"
        for t in rtasks:
            todo = [m for m in methods if (t["task_id"], m) not in done]
            if not todo:
                continue
            t0 = time.perf_counter()
            if scratch is None:
                scratch = Tree(gitdirs[repo], tree)
            moved = scratch.move(t["parent"])
            common = {
                "label": args.label,
                "task_id": t["task_id"],
                "repo": repo,
                "language": t["language"],
                "commit": t["commit"],
                "esqlog_commit": main_commit,
                "bench_commit": bench_commit,
            }
            recs: list[dict[str, Any]] = []
            setup: dict[str, Any] = {"tree_seconds": round(time.perf_counter() - t0, 3), **moved}
            if any(m.startswith("grep") for m in todo):
                t1 = time.perf_counter()
                kws = keywords(t["message"], file_word_sets(tree))
                for m, fn in (("grep-seq", grep_seq), ("grep-ranked", grep_ranked)):
                    if m not in todo and m + "+read" not in todo:
                        continue
                    lines = fn(tree, kws) if kws else []
                    tok, total, at = read_lines(lines, t["gold"])
                    hit = None
                    if tok is not None:
                        path, num, _ = lines[at]
                        g = next(
                            g
                            for g in t["gold"]
                            if g["path"] == path and g["start_line"] <= num <= g["end_line"]
                        )
                        hit = {"path": path, "line": num, "symbol": g["symbol"]}
                    base = {
                        "keywords": kws,
                        "output_lines": len(lines),
                        "read_tokens": total,
                        "gold_hit": hit,
                    }
                    if m in todo:
                        recs.append({"method": m, "tokens": tok, **base})
                    if m + "+read" in todo:
                        # then the agent opens the function it found: its lines as a
                        # viewer shows them ("N<tab>text"), as read_code would hand them
                        extra = 0
                        if hit is not None:
                            g = next(
                                g
                                for g in t["gold"]
                                if g["symbol"] == hit["symbol"] and g["path"] == hit["path"]
                            )
                            extra = count(function_text(tree, g))
                        recs.append(
                            {
                                "method": m + "+read",
                                "tokens": None if tok is None else tok + extra,
                                "read_function_tokens": extra if hit else None,
                                **base,
                            }
                        )
                setup["grep_seconds"] = round(time.perf_counter() - t1, 3)
            needs_index = any(m == "native" or m.startswith("esqlog") for m in todo)
            if needs_index:
                t1 = time.perf_counter()
                clean_calibration(cal_boost)
                # a fresh index per parent: an updated index keeps soft-deleted documents
                # (retained for the shard's history, merges do not drop them), and Lucene's
                # BM25 statistics count them, so the same tree ranked differently after
                # different histories (one cobra task read 4,510, 5,030 or 5,184 tokens)
                delete_index(args.url, index)
                summary = esqlog_cli(
                    "index",
                    str(tree),
                    "--url",
                    args.url,
                    "--index",
                    index,
                    "--calibrate",
                    str(cal_boost),
                )
                setup["index_seconds"] = round(time.perf_counter() - t1, 3)
                setup["files_indexed"] = summary.get("files_indexed")
                setup["documents"] = summary.get("documents")
            if "native" in todo:
                recs.append(
                    {"method": "native", **native(args.url, index, t["message"], t["gold"])}
                )
            by_mode: dict[str, list[tuple[str, dict[str, Any]]]] = {}
            for m in todo:
                if m.startswith("esqlog-"):
                    parts = m.split("-")
                    mode = parts[1]
                    call: dict[str, Any] = {"query": t["message"]}
                    if len(parts) > 2 and parts[2] == "16k":
                        call["max_tokens"] = 16000
                    by_mode.setdefault(mode, []).append((m, call))
            if "identifiers" in by_mode:
                t1 = time.perf_counter()
                clean_calibration(cal_ident)
                run(
                    [
                        str(Path(sys.executable).with_name("esqlog")),
                        "calibrate",
                        "--url",
                        args.url,
                        "--index",
                        index,
                        "--field",
                        "content",
                        "--vocabulary",
                        "--identifiers",
                        "--out",
                        str(cal_ident),
                    ]
                )
                setup["ident_calibrate_seconds"] = round(time.perf_counter() - t1, 3)
            for mode, calls in by_mode.items():
                cal = cal_ident if mode == "identifiers" else cal_boost
                t1 = time.perf_counter()
                recs += asyncio.run(esqlog_calls(args.url, index, cal, mode, calls, t["gold"]))
                setup[f"mcp_{mode}_seconds"] = round(time.perf_counter() - t1, 3)
            with open(out_path, "a") as out:
                for r in recs:
                    r["success"] = outcome(r["tokens"])
                    out.write(json.dumps({**common, **r, "setup": setup}) + "\n")
            line = " ".join(f"{r['method']}={r['tokens']}" for r in recs)
            print(
                f"[{time.time() - t_start:7.1f}s] {t['task_id']} "
                f"({time.perf_counter() - t0:.1f}s) {line}",
                file=sys.stderr,
                flush=True,
            )


if __name__ == "__main__":
    main()

"""The `mix` corpus: every function corpus in one, past a million documents.

Built for the scale benchmark (scripts/bench/scale.py): one index of real code in six
languages. Each part is the full corpus of one language as `build.py` writes
it (built first when its folder is missing), so the part's queries, whose gold
documents are all in the part, stay answerable in the mix. Ids need no
renaming: they hash paths that start with a language-specific install prefix
(`go-1.19/`, `openjdk-17/`, `cargo/`, `linux-6.1/` ...); a repeated id is an
error, not silently dropped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

PARTS = ["go", "java", "python", "ruby", "rust", "c"]
FILES = ["docs.jsonl", "queries.jsonl", "queries_noname.jsonl"]


def build_mix(
    out: Path, build_part: Callable[[str], object], name: str = "mix"
) -> dict[str, object]:
    """Concatenate the parts' docs and query files into out/<name>/ (streamed, line by line)."""
    start = time.monotonic()
    for part in PARTS:
        if not (out / part / "docs.jsonl").exists():
            build_part(part)
    dest = out / name
    dest.mkdir(parents=True, exist_ok=True)
    counts: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    handles = {f: (dest / f).open("w", encoding="utf-8") for f in FILES}
    try:
        for part in PARTS:
            counts[part] = {}
            for fname in FILES:
                n = 0
                with (out / part / fname).open(encoding="utf-8") as src:
                    for line in src:
                        if not line.strip():
                            continue
                        if fname == "docs.jsonl":
                            did = json.loads(line)["id"]
                            if did in seen:
                                raise SystemExit(f"mix: document id {did} of {part} repeats")
                            seen.add(did)
                        handles[fname].write(line if line.endswith("\n") else line + "\n")
                        n += 1
                counts[part][fname.removesuffix(".jsonl")] = n
                print(f"[{name}] {part}/{fname}: {n}", flush=True)
    finally:
        for h in handles.values():
            h.close()
    meta = {
        "corpus": name,
        "parts": counts,
        "docs": len(seen),
        "queries": sum(c["queries"] for c in counts.values()),
        "queries_noname": sum(c["queries_noname"] for c in counts.values()),
        "build_seconds": round(time.monotonic() - start, 1),
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    print(f"[{name}] " + json.dumps({k: v for k, v in meta.items() if k != "parts"}), flush=True)
    return meta

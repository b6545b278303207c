"""One fresh process for scale.py: how much memory a loaded snapshot or wrapper takes.

    python -m scripts.bench.scale_probe --what native|snapshot|boost|identifiers \
        --url URL --index INDEX --calibration FILE --query TEXT

Prints one JSON line when done: the process's resident set size (VmRSS, after the
work) and, for ``snapshot``, the RSS it grew by while loading the vocabulary snapshot,
then its identifier statistics (when the calibration has them), with the numpy arrays'
own bytes. scale.py times the
process from spawn to that line: for ``boost``/``identifiers`` that is a wrapper's cold
start (interpreter, imports, calibration and snapshot load, first answered search).
A separate process per measurement, because memory freed inside a process does not
reliably go back to the system, so one process could not measure two things.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scripts.bench.harness import add_url


def rss_bytes() -> int:
    """Current resident set size of this process (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--what", required=True, choices=["native", "snapshot", "boost", "identifiers"])
    add_url(ap, required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--calibration", type=Path, required=True)
    ap.add_argument("--query", required=True)
    args = ap.parse_args()

    from opensearchpy import OpenSearch

    from esqlog import wrap
    from esqlog.calibration.files import load_calibration

    out: dict[str, object] = {"what": args.what}
    body = {"query": {"match": {"body": args.query}}, "size": 10, "_source": False}
    client = OpenSearch(hosts=[args.url], timeout=120)
    if args.what == "snapshot":
        from esqlog.identifiers.files import load_for_calibration
        from esqlog.statistics.vocabulary import load_vocabulary

        cal = load_calibration(args.calibration)
        path = cal.vocabulary_path()
        if path is None:
            raise SystemExit(f"{args.calibration}: no vocabulary snapshot (calibrate --vocabulary)")
        before = rss_bytes()
        vocab = load_vocabulary(path, cal.vocabulary_sha256)
        middle = rss_bytes()
        out["vocabulary_rss_bytes"] = middle - before
        arrays = [vocab.hashes, vocab.df, vocab.bloom]
        out["vocabulary_array_bytes"] = sum(int(a.nbytes) for a in arrays if a is not None)
        out["vocabulary_terms"] = len(vocab)
        if path.with_name(path.name.replace(".vocab.", ".idents.", 1)).exists():
            idents = load_for_calibration(path, cal.vocabulary_sha256)
            out["identifier_rss_bytes"] = rss_bytes() - middle
            out["identifier_array_bytes"] = int(idents.df_engine.nbytes + idents.df_split.nbytes)
            out["identifier_words"] = len(idents.words)
    elif args.what == "native":
        client.search(index=args.index, body=body)
    else:
        wrapped = wrap(client, args.calibration, mode=args.what)
        wrapped.search(index=args.index, body=body)
    out["rss_bytes"] = rss_bytes()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

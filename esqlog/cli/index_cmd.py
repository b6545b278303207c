"""esqlog index: a repository into one search index, one document per function or class."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from esqlog.cli.shared_options import connection_options, open_engine, progress_factory
from esqlog.engine.connection import ConnectionSettings
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.errors import ClusterError, UsageError
from esqlog.extras import require_extra

if TYPE_CHECKING:
    from esqlog.engine.client import Engine
    from esqlog.indexing.chunk import ChunkLimits
    from esqlog.indexing.keep_fresh import Calibrated
    from esqlog.indexing.walk import WalkOptions

#: the modules of the ``index`` extra (one grammar wheel per parsed language)
INDEX_MODULES = (
    "pathspec",
    "tree_sitter",
    "tree_sitter_c",
    "tree_sitter_cpp",
    "tree_sitter_go",
    "tree_sitter_java",
    "tree_sitter_javascript",
    "tree_sitter_python",
    "tree_sitter_ruby",
    "tree_sitter_rust",
    "tree_sitter_typescript",
)


@click.command("index")
@click.argument("path", type=click.Path(path_type=Path))
@connection_options
@click.option(
    "--index",
    required=True,
    help="The index to write: created if missing; an existing one only if "
    "esqlog index created it from PATH (or with --adopt).",
)
@click.option(
    "--adopt",
    is_flag=True,
    help="Also write into an existing index esqlog index did not create from PATH "
    "(a folder that moved, or an index of your own); only documents with "
    "esqlog's file_hash field are ever replaced or deleted.",
)
@click.option(
    "--calibrate",
    "calibration_out",
    type=click.Path(),
    help="Then calibrate the content field and write the calibration JSON here "
    "with its vocabulary snapshot and identifiers statistics beside it (as "
    "esqlog calibrate --vocabulary --identifiers), ready for esqlog mcp "
    "--calibration. Reruns update them by the documents that changed.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="PATTERN",
    help="Skip files matching this .gitignore-style pattern (repeatable).",
)
@click.option(
    "--include-vendored",
    is_flag=True,
    help="Index vendor/, node_modules/, bower_components/, third_party/ too.",
)
@click.option(
    "--include-generated",
    is_flag=True,
    help="Index lock files, *.min.js, protobuf output and DO NOT EDIT files too.",
)
@click.option(
    "--max-file-size",
    type=click.IntRange(1, 100_000_000),
    default=1_000_000,
    show_default=True,
    help="Skip files larger than this many bytes.",
)
@click.option(
    "--max-chunk-lines",
    type=click.IntRange(5, 5000),
    default=150,
    show_default=True,
    help="Split longer functions/files into windows of this size.",
)
@click.option(
    "--max-chunk-chars",
    type=click.IntRange(500, 1_000_000),
    default=12_000,
    show_default=True,
    help="... and of at most this many characters.",
)
@click.option(
    "--shards",
    type=click.IntRange(1, 1024),
    default=1,
    show_default=True,
    help="Primary shards of a new index.",
)
@click.option(
    "--replicas",
    type=click.IntRange(0, 16),
    default=None,
    help="Replicas of a new index (default: the cluster's default).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON object instead of a report (with the skipped paths).",
)
@click.option("--verbose", is_flag=True, help="Also list the skipped paths, by reason.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr (default: when stderr is a terminal).",
)
def index_command(
    path: Path,
    connection: ConnectionSettings,
    index: str,
    adopt: bool,
    calibration_out: str | None,
    exclude: tuple[str, ...],
    include_vendored: bool,
    include_generated: bool,
    max_file_size: int,
    max_chunk_lines: int,
    max_chunk_chars: int,
    shards: int,
    replicas: int | None,
    as_json: bool,
    verbose: bool,
    progress: bool | None,
) -> None:
    """Index the source files under PATH into INDEX, for esqlog search and esqlog mcp.

    One document per function, method and class in Go, Java, Python, Ruby, JavaScript,
    TypeScript, Rust, C and C++ (tree-sitter); the code outside them and every other text
    file in chunks of lines. Fields: path, language, symbol, kind, start_line, end_line,
    content (the standard analyzer), and chunk, chunks, file_hash for updates.

    Honours .gitignore; skips symbolic links, binaries (a NUL byte), vendored folders,
    generated files (lock files, *.min.js, *.pb.go, a leading comment saying Code generated
    ... DO NOT EDIT or @generated), esqlog's own calibration and snapshot files, files over
    --max-file-size and minified text (lines averaging over 500 characters), FIFOs and
    sockets, and agent configuration (.mcp.json, .claude/, .cursor/, .codex/ ...; AGENTS.md
    and CLAUDE.md are kept). A file changed into a symlink or a FIFO during the run is
    skipped, never followed or waited on.

    With --calibrate FILE it then writes what esqlog mcp's best mode needs: the calibration,
    the vocabulary snapshot and the identifiers statistics. A rerun updates the three by the
    documents it changed (seconds), until those add up to 5% of the index since the last
    full calibration, which then runs again. Where every data node runs esqlog-terms 1.9.0
    or later it also writes the word lists the nodes plan identifiers queries from, into an
    esqlog-words-... index of esqlog's own, and removes the one FILE named before.

    Run it again to update: only changed files are re-indexed, and the documents of
    removed files are deleted. It writes to no index but INDEX and esqlog's own word lists,
    and creates INDEX only when PATH has something to index.
    """
    require_extra("index", "index", INDEX_MODULES)
    from esqlog.indexing.chunk import ChunkLimits
    from esqlog.indexing.target import check_name
    from esqlog.indexing.walk import WalkOptions

    if not path.is_dir():
        raise UsageError(
            f"PATH {str(path)!r} is not a folder", "pass the folder of the repository to index"
        )
    check_name(index)
    if calibration_out is not None:
        from esqlog.atomic import output_target

        output_target(calibration_out, "calibration file")
    options = WalkOptions(max_file_size, include_vendored, include_generated, exclude)
    limits = ChunkLimits(max_chunk_lines, max_chunk_chars)
    engine = open_engine(connection)
    show_progress = (sys.stderr.isatty() if progress is None else progress) and not as_json
    calibrated = None
    if calibration_out is not None:
        from esqlog.indexing.keep_fresh import Calibrated

        calibrated = Calibrated(calibration_out, connection)
    summary = run_index(
        engine,
        path.resolve(),
        index,
        options,
        limits,
        adopt=adopt,
        shards=shards,
        replicas=replicas,
        show_progress=show_progress,
        calibrated=calibrated,
    )
    if calibrated is not None:
        if not summary["documents"]:
            raise UsageError(
                f"nothing to calibrate: {str(path)!r} has no text file to index",
                "pass the folder of a repository with source files",
            )
        changed = bool(summary["chunks_indexed"] or summary["chunks_deleted"])
        summary["calibration"] = calibrated.finish(
            engine, summary["index"], changed, progress_factory(show_progress)
        )
    skipped_paths = summary.pop("skipped_paths")
    if as_json:
        click.echo(json.dumps({**summary, "skipped_paths": skipped_paths}, sort_keys=True))
    else:
        click.echo(_report(summary))
        if verbose:
            for reason, paths in skipped_paths.items():
                click.echo(f"skipped ({reason}): " + ", ".join(paths))


def run_index(
    engine: Engine,
    root: Path,
    index: str,
    options: WalkOptions,
    limits: ChunkLimits,
    adopt: bool,
    shards: int,
    replicas: int | None,
    show_progress: bool,
    calibrated: Calibrated | None = None,
) -> dict[str, Any]:
    """The whole run (also the benchmark's): returns the summary the CLI prints.

    Nothing to index (no text file under PATH) creates no index: a new index is made only
    for files that yield documents, and one this run made but could fill with nothing is
    deleted again, so the next run may use the name for the right folder.
    """
    from esqlog.indexing.bulk import IndexCounts, actions, refresh, send, stored_files
    from esqlog.indexing.target import forget_created, prepare, refreshes_paused
    from esqlog.indexing.walk import WalkReport, list_files, read_files

    started = time.perf_counter()
    report = WalkReport()
    files = list_files(root, options, report)
    target = prepare(
        engine,
        index,
        str(root),
        adopt,
        shards,
        replicas,
        instead_of_creating=_nothing_to_index(root) if not files else None,
    )
    if calibrated is not None:
        calibrated.start(engine, target.name, target.created)
    stored = {} if target.created else stored_files(engine, target.name)
    counts = IndexCounts()
    bar = progress_factory(show_progress, unit="files")
    advance = bar("indexing", len(files)) if bar and files else None
    # another's index keeps its refresh settings untouched
    with nullcontext() if target.adopted else refreshes_paused(engine, target):
        read = read_files(files, options, report, advance)
        stream: Iterable[dict[str, Any]] = actions(target.name, read, stored, limits, counts)
        if calibrated is not None:
            stream = calibrated.watch(engine, target.name, stream, stored)
        send(engine, stream, counts)
    refresh(engine, target.name)
    took = time.perf_counter() - started
    if counts.failures:
        raise ClusterError(
            f"{counts.failures} bulk operations failed, the first: {counts.first_failure}",
            "fix the cause and run esqlog index again (it resumes)",
        )
    stats = engine.perform(Request("GET", index_path(target.name, "_stats", "docs,store")))
    primaries = stats["_all"]["primaries"]
    if target.created and not int(primaries["docs"]["count"]):
        forget_created(engine, target.name)
        raise _nothing_to_index(root)
    return {
        "index": target.name,
        "created": target.created,
        "adopted": target.adopted,
        "root": str(root),
        "files": report.files,
        "bytes": report.bytes,
        "skipped": dict(sorted(report.skipped.items())),
        "skipped_paths": dict(sorted(report.skipped_paths.items())),
        "files_indexed": counts.files_indexed,
        "files_unchanged": counts.files_unchanged,
        "files_deleted": counts.files_deleted,
        "files_empty": counts.files_empty,
        "chunks_indexed": counts.chunks_indexed,
        "chunks_deleted": counts.chunks_deleted,
        "documents": int(primaries["docs"]["count"]),
        "store_bytes": int(primaries["store"]["size_in_bytes"]),
        "seconds": round(took, 3),
        "files_per_second": round(report.files / took, 1),
    }


def _nothing_to_index(root: Path) -> UsageError:
    return UsageError(
        f"nothing to index: {str(root)!r} has no text file esqlog index keeps "
        "(see --verbose for what it skipped)",
        "pass the folder of a repository with source files",
    )


def _report(s: dict[str, Any]) -> str:
    skipped = ", ".join(f"{reason} {n:,}" for reason, n in s["skipped"].items()) or "none"
    lines = [
        f"index        {s['index']} ({'created' if s['created'] else 'updated'}"
        f"{', adopted' if s['adopted'] else ''})",
        f"folder       {s['root']}",
        f"files        {s['files']:,} text files ({s['bytes'] / 1e6:,.1f} MB): "
        f"{s['files_indexed']:,} indexed, {s['files_unchanged']:,} unchanged, "
        f"{s['files_deleted']:,} removed, {s['files_empty']:,} without text",
        f"skipped      {skipped}",
        f"documents    {s['chunks_indexed']:,} written, {s['chunks_deleted']:,} deleted; "
        f"{s['documents']:,} in the index ({s['store_bytes'] / 1e6:,.1f} MB)",
        f"took         {s['seconds']:.1f} s ({s['files_per_second']:,.0f} files/s)",
    ]
    if "calibration" in s:
        cal = s["calibration"]
        how = {
            "calibrated": "calibrated in full",
            "refreshed": f"refreshed by {cal['changed_documents']:,} changed documents",
            "unchanged": "unchanged",
        }[cal["how"]]
        mode = (
            "the identifiers mode applies"
            if cal["identifiers_applies"]
            else "prose-like: esqlog mcp serves boost"
        )
        share = (
            f"{cal['split_share']:.1%} of tokens split: " if cal["split_share"] is not None else ""
        )
        lines.append(
            f"calibration  {cal['file']} (q = {cal['q']:.3f}, h_tok {cal['h_tok']:.4f}"
            f"; {how} in {cal['seconds']:.1f} s; {share}{mode})"
        )
        lines += cal.get("word_lists_lines", [])
    return "\n".join(lines)

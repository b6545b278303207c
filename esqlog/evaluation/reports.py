"""Report output: plain-text and CSV tables, and YAML regression expectations checked
against measured metrics (used by ``esqlog eval`` and the quality regression test)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------- tables


def _cell(value: Any) -> str:
    """Text of one table cell: floats to 4 decimals, missing values as '-'."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Aligned plain-text table for the CLI: numbers right-aligned, text left-aligned.

    Plain text (not rich) so the output is the same in a terminal, a log and a CI diff.
    """
    cells = [[_cell(row.get(col)) for col in columns] for row in rows]
    numeric = [
        all(isinstance(row.get(col), int | float) or row.get(col) is None for row in rows)
        and any(row.get(col) is not None for row in rows)
        for col in columns
    ]
    widths = [max([len(col), *(len(r[i]) for r in cells)]) for i, col in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(columns)), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def format_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """The same rows as CSV, for spreadsheets (floats at full precision)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(col) is None else row.get(col) for col in columns])
    return buf.getvalue()


# --------------------------------------------------------------------------- expectations

_SPEC_KEYS = frozenset({"min", "max", "value", "tol"})
Expectations = dict[str, dict[str, float]]


def load_expectations(path: str | Path) -> Expectations:
    """Read a YAML regression file: ``metric: {min: x}``, ``{max: x}`` or ``{value: x, tol: y}``.

    Validated on load, so a typo in the file fails loudly instead of silently checking
    nothing.
    """
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of metric names to checks")
    return {str(name): _parse_spec(path, str(name), spec) for name, spec in data.items()}


def _parse_spec(path: str | Path, name: str, spec: Any) -> dict[str, float]:
    """One metric's check, with every bound a finite number and a known key."""
    if not isinstance(spec, dict) or not spec:
        raise ValueError(f"{path}: {name}: expected a mapping like {{min: 0.3}}")
    unknown = set(map(str, spec)) - _SPEC_KEYS
    if unknown:
        raise ValueError(
            f"{path}: {name}: unknown keys {sorted(unknown)}; use min, max, value, tol"
        )
    if "tol" in spec and "value" not in spec:
        raise ValueError(f"{path}: {name}: tol needs a value")
    out: dict[str, float] = {}
    for key, raw in spec.items():
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise ValueError(f"{path}: {name}: {key} must be a finite number, got {raw!r}")
        out[str(key)] = float(raw)
    if out.get("tol", 0.0) < 0:
        raise ValueError(f"{path}: {name}: tol must not be negative")
    return out


def check_expectations(
    measured: Mapping[str, float],
    expected: Mapping[str, Mapping[str, float]] | str | Path,
) -> list[str]:
    """Human-readable failures of ``measured`` against ``expected`` (empty list = pass).

    ``expected`` is what :func:`load_expectations` returns, or the YAML file's path. A
    metric the file names but the run did not produce is a failure: a regression check
    that silently skips is worse than none.
    """
    if isinstance(expected, str | Path):
        expected = load_expectations(expected)
    failures: list[str] = []
    for name, spec in expected.items():
        if name not in measured:
            failures.append(f"{name}: not measured (expected {_describe(spec)})")
            continue
        value = float(measured[name])
        if math.isnan(value):
            failures.append(f"{name}: measured NaN (expected {_describe(spec)})")
            continue
        failures.extend(f"{name}: {msg}" for msg in _violations(value, spec))
    return failures


def _violations(value: float, spec: Mapping[str, float]) -> list[str]:
    """Which bounds of one spec ``value`` breaks."""
    out: list[str] = []
    if "min" in spec and value < spec["min"]:
        out.append(f"{value:.4f} < min {spec['min']:.4f} (short by {spec['min'] - value:.4f})")
    if "max" in spec and value > spec["max"]:
        out.append(f"{value:.4f} > max {spec['max']:.4f} (over by {value - spec['max']:.4f})")
    if "value" in spec:
        target, tol = spec["value"], spec.get("tol", 0.0)
        if abs(value - target) > tol + 1e-12:
            off = value - target
            out.append(f"{value:.4f} is not {target:.4f} ± {tol:.4f} (off by {off:+.4f})")
    return out


def _describe(spec: Mapping[str, float]) -> str:
    """A spec as text for failure messages."""
    parts = []
    if "min" in spec:
        parts.append(f">= {spec['min']:.4f}")
    if "max" in spec:
        parts.append(f"<= {spec['max']:.4f}")
    if "value" in spec:
        parts.append(f"{spec['value']:.4f} ± {spec.get('tol', 0.0):.4f}")
    return ", ".join(parts)

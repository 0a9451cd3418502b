"""Benchmark summary: ratios against the same-session baseline and throughput, printed at the end.

A benchmark test records its timing with the ``bench_record`` fixture::

    bench_record(group="n=128 float64", name="dobrushin", seconds=median, min=fastest, matrices=B,
                 ops=ops, baseline=False)

At the end of a measuring run (``make bench``) one table per file is printed: per group, every
entry's fastest and median time and, from the median, matrices/s, G ops/s and speed-up over the group's baseline(s). With
``--benchmark-disable`` (``make test``) nothing is timed and nothing is printed.

A record may carry ``target=(baseline_name, least_speed_up, label)``: the table then says whether
the ratio against that baseline met it. A measuring run also writes the README's benchmark table
(Markdown, with the machine it ran on, ``missed`` beside missed targets) to
``tests/bench/README-table.md`` (:func:`readme_table`), for docs/benchmarks.md.
"""
from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path

import pytest

_RECORDS: list[dict] = []


@pytest.fixture
def bench_record():
    def record(**row):
        _RECORDS.append(row)
    return record


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = "/".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return f"{cpu}, {os.cpu_count()} cores, load average {load} (1/5/15 min)"


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ANN001
    if not _RECORDS:
        return
    tr = terminalreporter
    tr.section("throughput and ratios against the same-session baselines")
    tr.write_line(f"machine: {_machine()}")
    groups: dict[str, list[dict]] = {}
    for row in _RECORDS:
        groups.setdefault(row["group"], []).append(row)
    tr.write_line("| group | kernel | B | min ms | median ms | matrices/s | G |a-b| ops/s | speed-up vs baselines |")
    tr.write_line("|---|---|---:|---:|---:|---:|---:|---|")
    for group, rows in groups.items():
        bases = [r for r in rows if r.get("baseline")]
        for r in rows:
            ratios = ", ".join(f"{r2['name']} {r2['seconds'] / r['seconds']:.1f}x"
                               for r2 in bases if r2 is not r)
            tr.write_line(f"| {group} | {r['name']} | {r['matrices']} | {1e3 * r['min']:.2f} | {1e3 * r['seconds']:.2f} | "
                          f"{r['matrices'] / r['seconds']:,.0f} | {r['ops'] / r['seconds'] / 1e9:.2f} | "
                          f"{ratios or '-'} |")
    table = readme_table(_RECORDS, _machine())
    out = Path(__file__).with_name("README-table.md")
    out.write_text(table)
    tr.write_line(f"README benchmark table written to {out}")
    for line in table.splitlines():
        if "missed" in line or line.startswith("| target"):
            tr.write_line(line)


def _threads() -> str:
    try:
        import numba
        import torch
        return f"{numba.get_num_threads()} numba threads, {torch.get_num_threads()} torch threads"
    except ImportError:  # pragma: no cover
        return ""


def readme_table(records: list[dict], machine: str) -> str:
    """The README's benchmark table from one run's records: every kernel against every baseline of
    its group (speed-up = baseline median / kernel median), targets marked met or **missed**."""
    lines = [f"Measured by `make bench` on {machine}; {_threads()}; "
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Medians; "
             "speed-up = baseline median / kernel median, in the same run.", "",
             "| benchmark | kernel | B | median ms | G ops/s | speed-up vs baselines | target |",
             "|---|---|---:|---:|---:|---|---|"]
    groups: dict[str, list[dict]] = {}
    for row in records:
        groups.setdefault(row["group"], []).append(row)
    for group, rows in groups.items():
        bases = {r["name"]: r for r in rows if r.get("baseline")}
        for r in rows:
            if r.get("baseline"):
                continue
            ratios = ", ".join(f"{name} {b['seconds'] / r['seconds']:.2f}x" for name, b in bases.items())
            target = ""
            t = r.get("target")
            if t and t[0] == "seconds":
                target = f"{t[2]}: {'met' if r['seconds'] < t[1] else '**missed**'}"
            elif t and t[0] in bases:
                got = bases[t[0]]["seconds"] / r["seconds"]
                label = t[2] if len(t) > 2 else f">= {t[1]:g}x {t[0]}"
                target = f"{label}: {'met' if got >= t[1] else '**missed**'}"
                if t[0] != "roofline" and "roofline" in bases:     # what the machine allows at most
                    target += f" (at the roofline: {bases[t[0]]['seconds'] / bases['roofline']['seconds']:.2f}x)"
            extra = ""
            if "exact_share" in r:
                extra = f" ({100 * r['exact_share']:.0f}% of heads exact, {1e3 * r['exact_seconds']:.0f} ms there"
                extra += f"; {r['levels']})" if r.get("levels") else ")"
            lines.append(f"| {group} | {r['name']}{extra} | {r['matrices']} | {1e3 * r['seconds']:.2f} | "
                         f"{r['ops'] / r['seconds'] / 1e9:.2f} | {ratios or '-'} | {target} |")
    return "\n".join(lines) + "\n"

"""Benchmark summary: ratios against the same-session baseline and throughput, printed at the end.

A benchmark test records its timing with the ``bench_record`` fixture::

    bench_record(group="n=128 float64", name="dobrushin", seconds=median, min=fastest, matrices=B,
                 ops=ops, baseline=False)

At the end of a measuring run (``make bench``) one table per file is printed: per group, every
entry's fastest and median time and, from the median, matrices/s, G ops/s and speed-up over the group's baseline(s). With
``--benchmark-disable`` (``make test``) nothing is timed and nothing is printed.
"""
from __future__ import annotations

import os
import platform

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

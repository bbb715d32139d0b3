#!/usr/bin/env python3
"""Prints the table of criterion medians and ratios that BENCHMARKS.md quotes.

Run after `cargo bench --manifest-path benches/Cargo.toml --bench read` (and
optionally `--bench write`), which write their results in the benches crate's
own target directory:

    python3 benches/report.py [benches/target/criterion]

For every group (e.g. `bert/decode`) it lists each benchmark's median time,
its throughput from that median, and its speed relative to recordwire in the
same group (recordwire's time / the peer's time: above 1 means the peer is
faster) and relative to the group's floors.
Only the Python standard library is used.
"""
import json
import os
import sys

root = (
    sys.argv[1]
    if len(sys.argv) > 1
    else os.path.join(os.path.dirname(os.path.abspath(__file__)), "target", "criterion")
)


def load(bench_dir):
    est = os.path.join(bench_dir, "new", "estimates.json")
    bench = os.path.join(bench_dir, "new", "benchmark.json")
    if not (os.path.exists(est) and os.path.exists(bench)):
        return None
    with open(est) as f:
        median_ns = json.load(f)["median"]["point_estimate"]
    with open(bench) as f:
        meta = json.load(f)
    return meta, median_ns


groups = {}
for dirpath, dirnames, _ in os.walk(root):
    if os.path.basename(dirpath) == "new" or "report" in dirpath:
        continue
    r = load(dirpath)
    if r is None:
        continue
    meta, median = r
    groups.setdefault(meta["group_id"], []).append((meta, median))


def fmt_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_thrpt(meta, ns):
    t = meta.get("throughput") or {}
    if "Bytes" in t:
        return f"{t['Bytes'] / ns:.3g} GB/s"
    if "Elements" in t:
        return f"{t['Elements'] / ns * 1e3:.3g} M/s"
    return ""


for group in sorted(groups):
    rows = sorted(groups[group], key=lambda r: r[1])
    ours = [m for meta, m in rows if meta["function_id"].startswith("recordwire")]
    base = ours[0] if ours else None
    print(f"\n{group}")
    print(f"  {'benchmark':<24} {'median':>10} {'throughput':>12} {'recordwire ×':>13}")
    for meta, m in rows:
        ratio = f"{m / base:.2f}" if base else ""
        print(f"  {meta['function_id']:<24} {fmt_time(m):>10} {fmt_thrpt(meta, m):>12} {ratio:>13}")

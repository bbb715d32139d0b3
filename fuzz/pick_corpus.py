#!/usr/bin/env python3
"""Picks the small corpus kept in the repository from a fuzz corpus.

    fuzz/pick_corpus.py BINARY CORPUS_DIR OUT_DIR [--files 100] [--bytes 1000000]

BINARY is the built fuzz target, CORPUS_DIR its (minimized) corpus. libFuzzer
is asked which features each input covers (`-merge=1` with a control file,
run on the CPU set the caller is pinned to), then inputs are picked greedily:
each time the one that adds the most features not covered yet, the smaller on
a tie, skipping any that would break the byte budget, until nothing adds a
feature or the file budget is spent. OUT_DIR is replaced by the picked inputs
(named by their SHA-1, as libFuzzer names them). Prints what it kept.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile


def features(binary, corpus):
    """{path: set of features} for every input of corpus, from libFuzzer."""
    with tempfile.TemporaryDirectory() as tmp:
        control = os.path.join(tmp, "control")
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        run = subprocess.run(
            [binary, "-merge=1", f"-merge_control_file={control}",
             "-rss_limit_mb=2048", "-timeout=10", empty, corpus],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            sys.exit(f"{binary}: merge failed:\n{run.stderr[-4000:]}")
        with open(control) as f:
            lines = f.read().splitlines()
    n = int(lines[0])
    paths = lines[2:2 + n]
    out = {}
    for line in lines[2 + n:]:
        parts = line.split()
        if parts and parts[0] == "FT":
            out[paths[int(parts[1])]] = set(map(int, parts[2:]))
    return out


def pick(covered_by, max_files, max_bytes):
    sizes = {p: os.path.getsize(p) for p in covered_by}
    left = dict(covered_by)
    covered, picked, total = set(), [], 0
    while left and len(picked) < max_files:
        best = None
        for p, fs in left.items():
            gain = len(fs - covered)
            if gain == 0 or total + sizes[p] > max_bytes:
                continue
            key = (gain, -sizes[p], p)
            if best is None or key > best[0]:
                best = (key, p)
        if best is None:
            break
        p = best[1]
        covered |= left.pop(p)
        picked.append(p)
        total += sizes[p]
    every = set().union(*covered_by.values()) if covered_by else set()
    return picked, total, len(covered), len(every)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--bytes", type=int, default=1_000_000)
    args = ap.parse_args()
    covered_by = features(args.binary, args.corpus)
    picked, total, got, every = pick(covered_by, args.files, args.bytes)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    for p in picked:
        with open(p, "rb") as f:
            data = f.read()
        with open(os.path.join(args.out, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
    print(f"{args.out}: {len(picked)} of {len(covered_by)} inputs, {total} bytes, "
          f"{got} of {every} features")


if __name__ == "__main__":
    main()

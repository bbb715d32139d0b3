#!/usr/bin/env python3
"""Page-aware orders on padded and unpadded files, cold: how many bytes a
partial epoch reads from disk, and how long it takes.

    python3 benches/cold/cold_pages.py RECORDWIRE [--size-mib 256] [--ids 20000]

Writes JSON Lines of tf.Examples with one bytes feature of mixed sizes (mostly
under half a page, one in ten over a page, from a fixed generator), packs them
twice with `recordwire pack` (plain, and `--pad-to-page 4096`), indexes both,
then for each file, each mode (page-aware, shuffle) and 3 rounds: evicts the
file and its index (posix_fadvise DONTNEED), takes the first IDS ids of epoch
0's order (`recordwire order`) and reads them with `recordwire get`, recording
the time and the blocks read (getrusage ru_inblock). Prints the medians.
Only the Python standard library is used (Linux).
"""
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cold_get import evict, run  # noqa: E402


def main():
    argv = sys.argv[1:]
    size_mib, n_ids = 256, 20000
    if "--size-mib" in argv:
        i = argv.index("--size-mib")
        size_mib = int(argv[i + 1])
        del argv[i : i + 2]
    if "--ids" in argv:
        i = argv.index("--ids")
        n_ids = int(argv[i + 1])
        del argv[i : i + 2]
    rw = argv[0]
    page = 4096
    rng = random.Random(11)
    blob = os.urandom(4 * page)
    with tempfile.TemporaryDirectory(dir=os.environ.get("COLD_DIR", "/var/tmp")) as d:
        jsonl = os.path.join(d, "in.jsonl")
        total = 0
        with open(jsonl, "w") as f:
            while total < size_mib << 20:
                n = rng.randrange(page, 3 * page) if rng.random() < 0.1 else rng.randrange(page // 2)
                value = base64.b64encode(blob[:n]).decode()
                f.write(json.dumps({"features": {"feature": {"x": {"bytes_list": {"value": [value]}}}}}) + "\n")
                total += n + 30
        files = {}
        for name, extra in [("unpadded", []), ("padded", ["--pad-to-page", str(page)])]:
            path = os.path.join(d, name + ".tfrecord")
            subprocess.run([rw, "pack"] + extra + [jsonl, path], check=True, stderr=subprocess.DEVNULL)
            subprocess.run([rw, "index", path], check=True, stderr=subprocess.DEVNULL)
            files[name] = path
        os.remove(jsonl)
        count = int(subprocess.run([rw, "count", files["unpadded"]], check=True, capture_output=True, text=True).stdout)
        print(f"{count} records, {os.path.getsize(files['unpadded']) / 2**20:.0f} MiB unpadded, "
              f"{os.path.getsize(files['padded']) / 2**20:.0f} MiB padded; the first {n_ids} ids of epoch 0")
        for mode in ["page-aware", "shuffle"]:
            for name, path in files.items():
                ids = subprocess.run([rw, "order", path, "--mode", mode, "--seed", "1"],
                                     check=True, capture_output=True, text=True).stdout.split()[:n_ids]
                runs = []
                for _ in range(3):
                    evict(path)
                    evict(path + ".rwindex")
                    runs.append(run(rw, ["get", path] + ids))
                secs = statistics.median(r[0] for r in runs)
                read = statistics.median(r[1] for r in runs)
                print(f"{mode:10} {name:8}: median {secs:.3f} s, {read / 2**20:.1f} MiB read "
                      f"({read / 4096 / n_ids:.2f} pages per record)")


if __name__ == "__main__":
    main()

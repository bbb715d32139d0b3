#!/usr/bin/env bash
# Every test, Rust and Python. Makes a venv (.venv-test/, reused; or
# $RECORDWIRE_VENV) with the pinned Python tools, builds the tests and the
# Python package (one cargo build) and installs the package into the venv,
# then runs `cargo test` (whose export tests read back
# Parquet/.npy with that venv's numpy and pyarrow), mypy over the package,
# mypy's stubtest of the stubs against the built module, and pytest over
# python/tests. Every adapter's framework is installed, so no
# adapter test is skipped (pytest is told to fail on a skip; the one
# exception is the CUDA test of the torch loader without a GPU). The remote
# tests (Rust and Python) start their own servers on 127.0.0.1: moto's S3
# server (moto[server], installed here and found on PATH) and HTTP servers
# that honour Range; a server that cannot start fails the run.
set -euo pipefail
cd "$(dirname "$0")"

venv="${RECORDWIRE_VENV:-.venv-test}"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
# The versions the tests were written against (see python/README.md).
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    maturin==1.16.0 numpy==2.4.6 pytest==9.2.0 pyarrow==22.0.0 mypy==1.19.0 \
    torch==2.15.0 tensorflow-cpu==2.21.0 grain==0.2.18 array-record==0.8.6 "ray[data]==2.60.0" \
    "moto[server]==5.2.5"
# RECORDWIRE_SETUP_ONLY=1: the venv alone (CI makes it while it builds).
if [ "${RECORDWIRE_SETUP_ONLY:-}" = 1 ]; then
    exit 0
fi
export PATH="$venv/bin:$PATH"

# One build of every test target and of the Python extension module, in one
# cargo invocation over the workspace: cargo unifies the features of the two
# crates' dependencies, so the library is compiled once for both (maturin's
# own build of the extension, with the Python crate's features alone, compiled
# the library and a dozen dependencies a second time: half an hour on the
# slow CI machines). The module is built as maturin builds it (no link to
# libpython: PYO3_BUILD_EXTENSION_MODULE, which pyo3's `extension-module`
# feature also sets) and installed as `maturin develop` installs a mixed
# project: the .so beside python/recordwire/*.py, and python/ on the venv's
# path. `pip install .` (CI's `pip` check) builds the wheel with maturin.
export PYO3_BUILD_EXTENSION_MODULE=1
cargo build --workspace --locked --lib --bins --tests
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
    python -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
rm -f python/recordwire/_native*.so
cp "$target_dir/debug/lib_native.so" python/recordwire/_native.abi3.so
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n' "$PWD/python" >"$site/recordwire_dev.pth"
python -c 'import recordwire, sys; print("recordwire", recordwire.__version__, "from", recordwire.__file__, file=sys.stderr)'

# Every test target (`--tests`: the library's and the CLI's unit tests and
# tests/*), then the documentation examples; `--workspace` as above, so that
# nothing is built again. Not the programs of examples/ (timing and
# profiling tools, each a binary of the whole crate, which a plain `cargo
# test` would build and link): CI's `examples` check builds them, linted.
cargo test --workspace --locked --tests
cargo test --workspace --locked --doc
python -m mypy python/recordwire
# The stubs against the built module (signatures, defaults, what exists);
# no allowlist: every difference is fixed, not excused.
python -m mypy.stubtest recordwire._native
# -rs lists skips; a skipped test fails the run (every tool is installed here).
log="${TMPDIR:-/tmp}/recordwire-pytest.log"
python -m pytest -rs -p no:cacheprovider python/tests --ignore=python/tests/test_ray.py "$@" | tee "$log"
# The two-node Ray cluster tests in a process of their own: the driver's
# gRPC threads outlive ray.shutdown(), and a DataLoader worker fork()ed from
# that process afterwards (test_torch's fork cases) now and then crashed.
# Exit status 5: an argument such as -k selected none of them.
set +e
python -m pytest -rs -p no:cacheprovider python/tests/test_ray.py "$@" | tee -a "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ] && [ "$status" -ne 5 ]; then
    exit "$status"
fi
# The one skip allowed: the CUDA paths of recordwire.torch.Loader on a
# machine without a GPU (and its CPU-only twin on one with a GPU); the
# reason says so. The real files beside the repository (RECORDWIRE_REALWORLD,
# see the README) are not a skip either way: where they are missing, the
# tests that read them go on without them and pytest's summary says so in a
# line that starts "SKIP: real files not read", which this check leaves alone.
if grep -E '^SKIPPED' "$log" | grep -vE 'test_torch_loader.py:[0-9]+: CUDA is (not )?available here'; then
    echo "pytest skipped tests (above): every tool is installed by this script, so none may be skipped" >&2
    exit 1
fi

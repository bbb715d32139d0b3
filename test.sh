#!/usr/bin/env bash
# Every test, Rust and Python: builds the Python package into a venv
# (.venv-test/, made once and reused) with maturin, then runs `cargo test`
# and pytest over python/tests.
set -euo pipefail
cd "$(dirname "$0")"

venv="${RECORDWIRE_VENV:-.venv-test}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    maturin==1.16.0 numpy==2.4.6 pytest==9.2.0

# maturin develop needs VIRTUAL_ENV (or a venv it finds) to install into.
VIRTUAL_ENV="$PWD/$venv" "$venv/bin/maturin" develop --release -m python/Cargo.toml

cargo test --locked
"$venv/bin/python" -m pytest python/tests

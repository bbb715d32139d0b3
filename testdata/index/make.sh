#!/usr/bin/env bash
# Makes the files of testdata/index/ (see README.md in this directory).
#
#   testdata/index/make.sh            # both steps
#   testdata/index/make.sh python     # only the text index made by the `tfrecord` package
#   testdata/index/make.sh native     # only the native test vectors
#
# Needs python3 (with venv and network access to PyPI) and cargo.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
what="${1:-all}"

if [[ "$what" == all || "$what" == python ]]; then
    # vahidk/tfrecord's create_index (the format DALI reads), from PyPI, pinned.
    venv="${VENV:-/tmp/recordwire-tfrecord-venv}"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "tfrecord==1.14.6"
    "$venv/bin/python" - "$root/testdata/ref/examples.tfrecord" "$here/examples.tfrecord.tfindex" <<'PY'
import sys
from importlib.metadata import version
from tfrecord.tools.tfrecord2idx import create_index

create_index(sys.argv[1], sys.argv[2])
print(f"tfrecord {version('tfrecord')}: wrote {sys.argv[2]}")
PY
fi

if [[ "$what" == all || "$what" == native ]]; then
    # The native index files, written by recordwire itself. The format is frozen:
    # a diff here is a format change (bump the version) or a bug.
    (cd "$root" && RECORDWIRE_WRITE_INDEX_VECTORS=1 cargo test --test index frozen_native_vectors)
fi

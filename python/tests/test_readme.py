"""The README's Python quick start runs as written, and prints what it says."""

import contextlib
import io
import os
import re

import pytest

from conftest import ROOT


def test_readme_python_quick_start_runs():
    pytest.importorskip("torch", reason="torch is installed by ./test.sh and .ci/run: it must not be missing there")
    text = (ROOT / "README.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(block.strip().splitlines()) <= 10
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    lines = [re.fullmatch(r"(\[.*\]) (\(.*\))", l).groups() for l in out.getvalue().splitlines()]
    # Rank 0 of 2 over 10 records: 5 ids, batches of 4 then 1.
    assert [eval(shape) for _, shape in lines] == [(4, 4), (1, 4)]
    labels = [x for batch, _ in lines for x in eval(batch)]
    assert len(labels) == 5 and all(0 <= x < 10 for x in labels)

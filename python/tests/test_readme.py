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
    # Rank 0 of 2 over 10 records, two epochs: 5 ids each, batches of 4 then 1.
    assert [eval(shape) for _, shape in lines] == [(4, 4), (1, 4)] * 2
    epochs = [[x for batch, _ in lines[k : k + 2] for x in eval(batch)] for k in (0, 2)]
    for labels in epochs:
        assert len(set(labels)) == 5 and all(0 <= x < 10 for x in labels)
    assert epochs[0] != epochs[1], "each epoch is shuffled anew"

"""Python details of issue 37: ``storage_options`` values of any scalar type,
a bad dtype in the dict form is ``recordwire.Error[invalid_spec]`` as in the
JSON form, the namespace exports what ``__all__`` names, a directory means
its record files, and the README's ``Loader`` signature is the real one."""

import inspect
import re

import numpy as np
import pytest

import recordwire
from conftest import ROOT, TESTDATA


def test_storage_options_take_bools_and_numbers(range_server, tmp_path):
    data = (TESTDATA / "ref" / "examples.tfrecord").read_bytes()
    range_server.objects["/details/examples.tfrecord"] = data
    url = f"{range_server.base}/details/examples.tfrecord"
    options = {"allow_http": True, "max_retries": 2, "retry_timeout": 30.5, "cache_dir": str(tmp_path)}
    ds = recordwire.Dataset(url, storage_options=options)
    local = recordwire.Dataset(str(TESTDATA / "ref" / "examples.tfrecord"))
    assert [bytes(ds.raw(i)) for i in range(len(ds))] == [bytes(local.raw(i)) for i in range(len(local))]
    with pytest.raises(TypeError, match=r"storage_options\['max_retries'\]: a string, a bool or a number, not list"):
        recordwire.Dataset(url, storage_options={"allow_http": True, "max_retries": [2]})


def test_a_bad_dtype_in_the_dict_form_is_an_invalid_spec():
    ds = recordwire.Dataset(str(TESTDATA / "ref" / "small.tfrecord"))
    with pytest.raises(recordwire.Error) as json_form:
        ds.decode([0], {"features": {"label": {"form": "fixed_len", "dtype": "int46", "shape": []}}})
    with pytest.raises(recordwire.Error) as dict_form:
        ds.decode([0], {"label": recordwire.FixedLen((), "int46")})
    with pytest.raises(recordwire.Error) as spec_form:
        recordwire.spec({"label": recordwire.FixedLen((), "int46")})
    assert json_form.value.kind == dict_form.value.kind == spec_form.value.kind == "invalid_spec"
    assert "int46" in str(dict_form.value)


def test_the_namespace_exports_what_all_names():
    import types

    public = {n for n in dir(recordwire) if not n.startswith("_") and not isinstance(getattr(recordwire, n), types.ModuleType)}
    assert public == set(recordwire.__all__) - {"__version__"}, public ^ set(recordwire.__all__)
    for name in ["Any", "Literal", "Mapping", "Optional"]:
        assert not hasattr(recordwire, name)


def test_a_directory_means_its_record_files(tmp_path):
    for k in range(2):
        with recordwire.Writer(tmp_path / f"part-{k}.tfrecord") as w:
            for i in range(5):
                w.write({"id": 10 * k + i})
    recordwire.Dataset(str(tmp_path / "part-0.tfrecord")).write_index()
    (tmp_path / ".hidden").write_bytes(b"not a record file")
    ds = recordwire.Dataset(tmp_path)
    assert [p.rsplit("/", 1)[-1] for p in ds.files] == ["part-0.tfrecord", "part-1.tfrecord"]
    assert [int(ds[i]["id"][0]) for i in range(len(ds))] == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(recordwire.Error, match="a directory with no record file") as e:
        recordwire.Dataset(str(empty))
    assert e.value.kind == "usage_error"


def signature_text(f):
    """A signature as written in the README: defaults, no annotations."""
    parts = []
    star = False
    for p in inspect.signature(f).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        elif p.default is p.empty:
            parts.append(p.name)
        else:
            default = f'"{p.default}"' if isinstance(p.default, str) else repr(p.default)
            parts.append(f"{p.name}={default}")
    return ", ".join(parts)


def test_the_readme_loader_signature_is_the_real_one():
    text = (ROOT / "README.md").read_text()
    (written,) = re.findall(r"`recordwire\.Loader\((.*?)\)`", text, re.S)
    assert " ".join(written.split()) == signature_text(recordwire.Loader)
    doc = " ".join(recordwire.Loader.__doc__.split())
    assert f"Loader({signature_text(recordwire.Loader)})" in doc
    # Where the loader is introduced: a `break` and the next loop.
    start = text.index("`recordwire.Loader(")
    intro = " ".join(text[start : text.index("\n- ", start)].split())
    assert "after a `break`, the next `for` resumes the same epoch" in intro


def test_the_tests_of_the_real_files_pass_without_them_and_say_so(tmp_path):
    # Issue 37, point 17: a clone without ../shared/. Each test that reads
    # the real files runs with what the repository holds, and the summary
    # says they were not read; none is a pytest skip (./test.sh fails those).
    import os
    import subprocess
    import sys

    missing = tmp_path / "no-real-files"
    tests = [
        "python/tests/test_gz.py::test_the_real_files_globbed_as_one_dataset",
        "python/tests/test_infer_skip.py::test_the_real_files_infer_as_the_cli_does",
        "python/tests/test_payload_notes.py::test_real_files_say_what_they_look_like",
    ]
    env = dict(os.environ, RECORDWIRE_REALWORLD=str(missing))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", *tests],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout and "SKIPPED" not in run.stdout, run.stdout
    for test in tests:
        assert f"SKIP: real files not read: {missing} missing; set RECORDWIRE_REALWORLD ({test}" in run.stdout, (
            test,
            run.stdout,
        )

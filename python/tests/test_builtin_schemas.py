"""The built-in schemas against protobuf itself: ``recordwire cat --message
NAME`` on the real TensorBoard event file and TensorFlow Ranking's two ELWC
files gives, line for line and value for value, what
``json_format.MessageToDict(msg, preserving_proto_field_name=True)`` gives,
where ``msg`` is parsed by classes built at run time from a descriptor set
that ``grpc_tools.protoc`` compiles here from the same transcribed .proto
files (src/schema/builtin/), so that the oracle reads the same schema."""

import json
import re
import subprocess

import pytest

from conftest import ROOT, real_files
from test_arrow import recordwire_bin

BUILTIN = ROOT / "src" / "schema" / "builtin"

CASES = [
    ("tensorflow_lingvo__lingvo__core__ops__testdata__events.out.tfevents.test", "tensorflow.Event"),
    (
        "tensorflow_ranking__tensorflow_ranking__examples__data__eval_elwc.tfrecord",
        "tensorflow.serving.ExampleListWithContext",
    ),
    (
        "tensorflow_ranking__tensorflow_ranking__extension__testdata__tfrbert_elwc_test.tfrecord",
        "tensorflow.serving.ExampleListWithContext",
    ),
]


def builtin_files():
    """(import name, file under src/schema/builtin/) as src/schema/builtin.rs
    embeds them."""
    table = (ROOT / "src" / "schema" / "builtin.rs").read_text()
    files = re.findall(r'"([^"]+\.proto)",\s*include_str!\("builtin/([^"]+)"\)', table)
    assert len(files) >= 10, files
    return files


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    """Message classes from the transcribed files, compiled by protoc."""
    import subprocess
    import sys

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pytest.importorskip("grpc_tools", reason="grpcio-tools compiles the transcribed files for the oracle")
    tree = tmp_path_factory.mktemp("protos")
    names = []
    for name, file in builtin_files():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes((BUILTIN / file).read_bytes())
        names.append(name)
    out = tree / "set.pb"
    # In a process of its own: grpc_tools' protoc in this process, beside
    # the upb runtime other tests have loaded, crashed the interpreter.
    done = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{tree}", "--include_imports", f"--descriptor_set_out={out}", *names],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"protoc failed on the built-in files: {done.stderr}"
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)

    def get(name):
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))

    return get


def records(path):
    """The payloads of a TFRecord file, by the framing alone."""
    import struct

    data = path.read_bytes()
    at = 0
    while at < len(data):
        (n,) = struct.unpack_from("<Q", data, at)
        yield data[at + 12 : at + 12 + n]
        at += 12 + n + 4


@pytest.mark.parametrize("name,message", CASES)
def test_cat_by_a_builtin_schema_is_message_to_dict(classes, name, message):
    from google.protobuf import json_format

    files = real_files()
    if files is None:
        return
    (path,) = [f for f in files if f.name == name]
    cli = subprocess.run(
        [recordwire_bin(), "cat", "--message", message, str(path)], capture_output=True, text=True
    )
    assert cli.returncode == 0, cli.stderr
    lines = cli.stdout.splitlines()
    cls = classes(message)
    payloads = list(records(path))
    assert len(lines) == len(payloads) > 0
    for i, (line, payload) in enumerate(zip(lines, payloads)):
        want = json_format.MessageToDict(cls.FromString(payload), preserving_proto_field_name=True)
        assert json.loads(line) == want, f"record {i}"
    # Detected without --message: the same lines.
    detected = subprocess.run([recordwire_bin(), "cat", str(path)], capture_output=True, text=True)
    assert detected.returncode == 0, detected.stderr
    assert detected.stdout == cli.stdout


def test_every_builtin_message_is_in_the_protoc_schema(classes):
    """The names the CLI offers are messages of the files protoc reads."""
    for name in [
        "tensorflow.Event",
        "tensorflow.Example",
        "tensorflow.SequenceExample",
        "tensorflow.serving.ExampleList",
        "tensorflow.serving.ExampleListWithContext",
        "tensorflow.serving.Input",
    ]:
        assert classes(name).DESCRIPTOR.full_name == name

"""The descriptors of a protobuf message class as a ``FileDescriptorSet``,
for ``recordwire.Schema.from_class`` (the native module reads the set)."""

from typing import Any, List, Optional, Set, Tuple


def descriptor_set_of(obj: Any, message: Optional[str] = None) -> Tuple[bytes, str]:
    """``(set bytes, full name)`` of a generated message class, its
    ``DESCRIPTOR``, or a ``DescriptorPool`` (``message`` names the type)."""
    try:
        from google.protobuf import descriptor_pb2
    except ImportError as e:  # pragma: no cover - protobuf is what obj came from
        raise ImportError("Schema.from_class needs the protobuf package") from e
    if hasattr(obj, "FindMessageTypeByName"):
        if message is None:
            raise TypeError("Schema.from_class(pool, message): name the message type of the pool")
        descriptor = obj.FindMessageTypeByName(message)
    else:
        descriptor = getattr(obj, "DESCRIPTOR", obj)
        if not hasattr(descriptor, "full_name") or not hasattr(descriptor, "file"):
            raise TypeError(
                f"Schema.from_class takes a message class, its DESCRIPTOR or a DescriptorPool, not {type(obj).__name__}"
            )
        if message is not None and message != descriptor.full_name:
            raise ValueError(f"message={message!r}, but the class is {descriptor.full_name}")
    files: List[Any] = []
    seen: Set[str] = set()

    def add(f: Any) -> None:
        # Dependencies first, as protoc --include_imports orders them.
        if f.name in seen:
            return
        seen.add(f.name)
        for dep in f.dependencies:
            add(dep)
        files.append(f)

    add(descriptor.file)
    out = descriptor_pb2.FileDescriptorSet()
    for f in files:
        proto = out.file.add()
        f.CopyToProto(proto)
    return out.SerializeToString(), descriptor.full_name

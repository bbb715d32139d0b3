"""Real servers on 127.0.0.1 for the remote tests, started by the tests:
moto's S3 server (``moto_server``, installed by ./test.sh) and an HTTP
server that honours ``Range``. A server that cannot start fails the test
with the reason; it is never skipped."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Optional


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(method: str, url: str, body: Optional[bytes] = None, extra: Optional[Dict[str, str]] = None) -> int:
    # An explicit content type: urllib's default for a body (a form) makes
    # moto's server wait for form fields.
    headers = {"Content-Type": "application/octet-stream"} if body is not None else {}
    headers.update(extra or {})
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


class Moto:
    """moto's S3 server on a free port of 127.0.0.1."""

    def __init__(self) -> None:
        program = os.environ.get("RECORDWIRE_MOTO_SERVER") or shutil.which(
            "moto_server", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        )
        if program is None:
            raise RuntimeError(
                "the S3 server for the remote tests cannot start: moto_server is not installed "
                "(pip install 'moto[server]'; ./test.sh installs it)"
            )
        self.port = free_port()
        # A file, not a pipe: moto logs every request, and a pipe nobody
        # reads would fill and stop it.
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [program, "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self.endpoint = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"moto's S3 server exited at start: {self.log.read().decode()}")
            try:
                if _request("GET", self.endpoint + "/") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"moto's S3 server did not answer on {self.endpoint} within 60 s")
            time.sleep(0.1)

    def bucket(self, name: str) -> None:
        status = _request("PUT", f"{self.endpoint}/{name}")
        assert status == 200, f"create bucket {name}: {status}"

    def put(self, bucket: str, key: str, data: bytes, public: bool = False) -> None:
        """Uploads ``data``; ``public``: readable without credentials."""
        extra = {"x-amz-acl": "public-read"} if public else None
        status = _request("PUT", f"{self.endpoint}/{bucket}/{key}", data, extra)
        assert status == 200, f"put {bucket}/{key}: {status}"

    def options(self, cache_dir: str) -> Dict[str, str]:
        return {
            "aws_endpoint": self.endpoint,
            "allow_http": "true",
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            "aws_region": "us-east-1",
            "cache_dir": cache_dir,
        }

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


class RangeServer:
    """An HTTP server of files in memory that honours ``Range``."""

    def __init__(self) -> None:
        self.objects: Dict[str, bytes] = {}
        self.requests = 0
        # Body bytes sent (GETs), counted under a lock: handlers run on
        # threads of their own.
        self.bytes_sent = 0
        self._lock = threading.Lock()
        objects = self.objects
        server_self = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _object(self):
                server_self.requests += 1
                data = objects.get(self.path.split("?")[0])
                if data is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                return data

            def _headers(self, status, length, data, extra=()):
                self.send_response(status)
                self.send_header("Content-Length", str(length))
                self.send_header("ETag", f'"{hash(data) & 0xFFFFFFFF:x}-{len(data)}"')
                self.send_header("Accept-Ranges", "bytes")
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()

            def do_HEAD(self):
                data = self._object()
                if data is not None:
                    self._headers(200, len(data), data)

            def do_GET(self):
                data = self._object()
                if data is None:
                    return
                spec = self.headers.get("Range")
                # Counted before the body is written: a test that reads or
                # resets the counts once its read returned finds them there.
                if not spec:
                    self._headers(200, len(data), data)
                    server_self._sent(len(data))
                    self.wfile.write(data)
                    return
                a, _, b = spec.removeprefix("bytes=").partition("-")
                n = len(data)
                start, end = (n - int(b), n) if a == "" else (int(a), min(int(b) + 1, n) if b else n)
                if start >= n or start >= end:
                    self._headers(416, 0, data, [("Content-Range", f"bytes */{n}")])
                    return
                self._headers(206, end - start, data, [("Content-Range", f"bytes {start}-{end - 1}/{n}")])
                server_self._sent(end - start)
                self.wfile.write(data[start:end])

        class Server(ThreadingHTTPServer):
            # A loader opens dozens of connections at once; the default
            # listen backlog (5) overflowed, and a connection the kernel
            # dropped waited out the client's whole retry_timeout (30 s).
            request_queue_size = 1024

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def _sent(self, n: int) -> None:
        with self._lock:
            self.bytes_sent += n

    def reset(self) -> None:
        """Counts requests and bytes from zero."""
        with self._lock:
            self.requests = 0
            self.bytes_sent = 0

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

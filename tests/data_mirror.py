"""A loopback stand-in for GitHub's raw files and the Hugging Face hub, for the fetch tests.

The GitHub side serves a folder laid out as ``<owner>/<repo>/<commit>/<path>`` (symlinks into
the data directory the harness finds, see tests/data_paths.py, or ``<repo>/../shared/official`` for the judges' upstream files); the hub side answers ``/datasets/<repo>/resolve/<revision>/<file>``
as huggingface_hub expects (HEAD with ``X-Repo-Commit``, ``ETag`` and ``Content-Length``, then GET).
Every request is recorded, and a test can make a path serve other bytes or stop halfway.
"""

from __future__ import annotations

import hashlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from judges.official.texts import UPSTREAMS
from loaders.fetch import LOCOMO_COMMIT, ORGMEM_COMMIT
from tests.data_paths import DATA_ROOT

ROOT = Path(__file__).resolve().parents[1]
DATA = DATA_ROOT if DATA_ROOT is not None else Path("no-benchmark-data-found")  # as the harness finds it (tests/data_paths.py)
SHARED_OFFICIAL = ROOT.parent / "shared" / "official"


@dataclass
class MirrorState:
    """What the server was asked, and what it is told to do differently."""

    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)
    replaced: dict[str, bytes] = field(default_factory=dict)  # path -> bytes served instead
    cut_halfway: set[str] = field(default_factory=set)  # paths whose body stops at half its length
    hub_files: dict[str, bytes] = field(default_factory=dict)  # /datasets/.../resolve/... -> bytes
    lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self, method: str = "GET") -> list[str]:
        with self.lock:
            return [p for m, p in self.requests if m == method]

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


class MirrorHandler(SimpleHTTPRequestHandler):
    state: MirrorState

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def _answer(self, send_body: bool) -> None:
        path = self.path.split("?", 1)[0]
        with self.state.lock:
            self.state.requests.append((self.command, path))
        body = self.state.replaced.get(path, self.state.hub_files.get(path))
        if body is None:
            body = self._file_bytes(path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if path in self.state.hub_files:
            self.send_header("X-Repo-Commit", path.split("/resolve/", 1)[1].split("/", 1)[0])
            self.send_header("ETag", f'"{hashlib.sha256(body).hexdigest()}"')
        self.end_headers()
        if not send_body:
            return
        if path in self.state.cut_halfway:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)

    def _file_bytes(self, path: str) -> bytes | None:
        local = Path(self.translate_path(path))
        return local.read_bytes() if local.is_file() else None


def lay_out_github(root: Path) -> Path:
    """``root`` laid out as raw.githubusercontent.com serves the two pinned repositories."""
    orgmem = root / "PandelisZ" / "OrgMemBench" / ORGMEM_COMMIT
    orgmem.mkdir(parents=True)
    (orgmem / "datasets").symlink_to(DATA / "orgmembench" / "datasets", target_is_directory=True)
    locomo = root / "snap-research" / "locomo" / LOCOMO_COMMIT / "data"
    locomo.mkdir(parents=True)
    (locomo / "locomo10.json").symlink_to(DATA / "locomo" / "locomo10.json")
    return root


def lay_out_official(root: Path, source: Path = SHARED_OFFICIAL) -> Path:
    """``root`` laid out as raw.githubusercontent.com serves the pinned upstream evaluation files
    found in ``source`` (laid out as ``<folder>/<path>``)."""
    for upstream in UPSTREAMS:
        at_commit = root / upstream.repo / upstream.commit
        at_commit.parent.mkdir(parents=True)
        at_commit.symlink_to(source / upstream.folder, target_is_directory=True)
    return root


@contextmanager
def serve(root: Path) -> Iterator[tuple[str, MirrorState]]:
    """Serve ``root`` (and any hub files put in the state) on a free loopback port; yields (base URL, state)."""
    state = MirrorState()
    handler = type("Handler", (MirrorHandler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    """A loopback URL on which nothing listens (the port was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"

"""Start and stop the collection service: in a background thread or blocking.

Logging: uvicorn's access log is rewritten by :class:`AccessLogFilter` so a
line shows the method, the path *without its query string*, and the status,
with the client address replaced by ``-``. Request bodies (the reports),
headers (the admin token) and query strings are never logged.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from deniable.server.app import create_app
from deniable.server.storage import Storage
from deniable.server.surveys import Survey

__all__ = ["BackgroundServer", "run", "AccessLogFilter", "log_config"]

SurveySource = str | Path | dict[str, Any] | Survey


class AccessLogFilter(logging.Filter):
    """Drop the query string and the client address from uvicorn access records."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5:
            _client, method, path, version, status = args
            record.args = ("-", method, str(path).split("?", 1)[0], version, status)
        return True


def log_config(level: str = "info", access_log: bool = True) -> dict[str, Any]:
    """uvicorn ``log_config``: plain lines on stderr, access lines redacted."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"redact": {"()": AccessLogFilter}},
        "formatters": {
            "default": {"format": "%(levelname)s %(name)s: %(message)s"},
            "access": {"format": '%(levelname)s access: %(message)s'},
        },
        "handlers": {
            "default": {"class": "logging.StreamHandler", "formatter": "default",
                        "stream": "ext://sys.stderr"},
            "access": {"class": "logging.StreamHandler", "formatter": "access",
                       "filters": ["redact"], "stream": "ext://sys.stderr"},
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"level": level.upper()},
            "uvicorn.access": {
                "handlers": ["access"] if access_log else [],
                "level": level.upper() if access_log else "CRITICAL",
                "propagate": False,
            },
        },
    }


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: no Nagle delay between a response's header and body
    # writes (with keep-alive and delayed ACKs that costs ~40 ms per request)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _server(
    surveys: Iterable[SurveySource], db_url: str, admin_token: str | None, log_level: str,
    access_log: bool, sqlite_synchronous: str = "NORMAL",
) -> tuple[uvicorn.Server, Storage]:
    storage = Storage(db_url, sqlite_synchronous=sqlite_synchronous)
    app = create_app(storage, surveys, admin_token=admin_token)
    config = uvicorn.Config(
        app, log_config=log_config(log_level, access_log), log_level=log_level,
        access_log=access_log, server_header=False, proxy_headers=False,
    )
    return uvicorn.Server(config), storage


class BackgroundServer:
    """The service in a background thread on a free port, for demos and tests.

    >>> with BackgroundServer(["examples/honor-code.yaml"]) as server:  # doctest: +SKIP
    ...     print(server.url)

    ``db_url=None`` uses a SQLite file in a temporary directory, removed on exit.
    """

    def __init__(
        self,
        surveys: Iterable[SurveySource] = (),
        db_url: str | None = None,
        admin_token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        log_level: str = "warning",
        access_log: bool = False,
    ) -> None:
        self._tmpdir: str | None = None
        if db_url is None:
            self._tmpdir = tempfile.mkdtemp(prefix="deniable-")
            db_url = f"sqlite:///{self._tmpdir}/deniable.db"
        self.db_url = db_url
        self._surveys = list(surveys)
        self._admin_token = admin_token
        self._host, self._port = host, port
        self._log_level, self._access_log = log_level, access_log
        self._thread: threading.Thread | None = None
        self.url = ""

    def start(self) -> BackgroundServer:
        self.server, self.storage = _server(
            self._surveys, self.db_url, self._admin_token, self._log_level, self._access_log
        )
        self._sock = sock = _bind(self._host, self._port)
        self.url = _url(sock)
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, name="deniable-server", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the deniable server did not start; see the log above")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.server.should_exit = True
            self._thread.join(timeout=30)
            self._thread = None
            self._sock.close()
            self.storage.close()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def run(
    surveys: Iterable[SurveySource],
    db_url: str = "sqlite:///deniable.db",
    host: str = "127.0.0.1",
    port: int = 8000,
    admin_token: str | None = None,
    *,
    log_level: str = "info",
    access_log: bool = True,
    sqlite_synchronous: str = "NORMAL",
) -> None:
    """Serve until interrupted (Ctrl-C / SIGTERM). Prints the base URL once listening.

    ``admin_token=None`` reads the environment variable ``DENIABLE_ADMIN_TOKEN``.
    ``sqlite_synchronous="FULL"`` makes every acknowledged report survive a
    power cut too (``NORMAL``, the default, survives a killed server).
    """
    server, storage = _server(surveys, db_url, admin_token, log_level, access_log, sqlite_synchronous)
    sock = _bind(host, port)
    print(f"deniable: serving on {_url(sock)}", file=sys.stderr, flush=True)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        storage.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m deniable.server SURVEY.yaml ... [--db URL] [--host H] [--port P]``.

    The admin token is read from ``DENIABLE_ADMIN_TOKEN`` (not a command-line
    argument, which other users of the machine could see).
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m deniable.server", description=main.__doc__)
    parser.add_argument("surveys", nargs="*", help="survey definition files (YAML or JSON)")
    parser.add_argument("--db", default="sqlite:///deniable.db", help="database URL")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--no-access-log", action="store_true")
    args = parser.parse_args(argv)
    run(
        args.surveys, db_url=args.db, host=args.host, port=args.port,
        admin_token=os.environ.get("DENIABLE_ADMIN_TOKEN") or None,
        log_level=args.log_level, access_log=not args.no_access_log,
    )
    return 0

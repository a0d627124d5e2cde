"""Start and stop the collection service: in a background thread or blocking.

Logging: uvicorn's access log is rewritten by :class:`AccessLogFilter` so a
line shows the method, the path *without its query string*, and the status,
with the client address replaced by ``-``. Request bodies (the reports),
headers (the admin token) and query strings are never logged. An unexpected
error (a 500) is logged as its traceback's code lines and exception types,
without the exceptions' messages (:class:`TracebackFilter`): a database
driver's message can quote the row it refused.
"""

from __future__ import annotations

import errno
import gc
import logging
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import uvicorn

from deniable.errors import DeniableError
from deniable.server._app import create_app
from deniable.server._database import DEFAULT_DB_URL
from deniable.server._security import parse_networks
from deniable.server._storage import Storage
from deniable.server._surveys import Survey, load_surveys

if TYPE_CHECKING:
    from deniable._ohttp._keys import KeyRing

__all__ = ["BackgroundServer", "run", "AccessLogFilter", "TracebackFilter", "log_config", "GC_THRESHOLDS"]

SurveySource = str | Path | dict[str, Any] | Survey


GC_THRESHOLDS = (100_000, 50, 100)
"""The served process's garbage-collector thresholds (Python's defaults: 700, 10, 10).

A 10,000-response batch decodes into some 40,000 containers that die when it
is stored, a tenth of a second later; with the defaults they were collected
30 times and promoted while alive, and the full collections that followed
(16 in a 10-second run of 50,000 reports/s, each holding every thread for up
to 0.2 s) were the stalls of the results read meanwhile. The request data
hold no reference cycles, so collecting young objects less often costs
little memory.
"""


class AccessLogFilter(logging.Filter):
    """Drop the query string and the client address from uvicorn access records."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5:
            _client, method, path, version, status = args
            record.args = ("-", method, str(path).split("?", 1)[0], version, status)
        return True


class TracebackFilter(logging.Filter):
    """Log an exception as its frames and types only; its message (and SQL parameters) withheld.

    A database error's message can hold the data of the request (PostgreSQL's
    ``DETAIL: Key (...)=(...)``); the SQL statement, which holds placeholders
    only, is kept.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redacted_traceback(record.exc_info[1])
        return True


def redacted_traceback(exc: BaseException) -> str:
    """``exc``'s traceback (causes and groups included) without the exceptions' messages."""
    lines: list[str] = []
    seen: set[int] = set()

    def add(e: BaseException) -> None:
        if id(e) in seen:
            return
        seen.add(id(e))
        cause = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
        if cause is not None:
            add(cause)
            lines.append("\nwhich led to:\n")
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.format_tb(e.__traceback__))
        lines.append(f"{type(e).__module__}.{type(e).__qualname__} (message withheld: it may quote request data)\n")
        statement = getattr(e, "statement", None)
        if isinstance(statement, str):
            lines.append(f"SQL: {statement}\n")
        for inner in getattr(e, "exceptions", ()):  # an exception group's members
            lines.append("in the group:\n")
            add(inner)

    add(exc)
    return "".join(lines).rstrip("\n")


def log_config(level: str = "info", access_log: bool = True) -> dict[str, Any]:
    """uvicorn ``log_config``: plain lines on stderr, access lines redacted."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"redact": {"()": AccessLogFilter}, "traceback": {"()": TracebackFilter}},
        "formatters": {
            "default": {"format": "%(levelname)s %(name)s: %(message)s"},
            "access": {"format": '%(levelname)s access: %(message)s'},
        },
        "handlers": {
            "default": {"class": "logging.StreamHandler", "formatter": "default",
                        "filters": ["traceback"], "stream": "ext://sys.stderr"},
            "access": {"class": "logging.StreamHandler", "formatter": "access",
                       "filters": ["redact"], "stream": "ext://sys.stderr"},
        },
        "root": {"handlers": ["default"], "level": "WARNING"},
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


DEFAULT_PORT = 8765
"""The port ``deniable serve`` listens on unless told: not 8000, which ``mkdocs serve`` (the docs site) and
many development servers take."""


class PortInUseError(DeniableError, OSError):
    """The port to listen on is taken: the message names it and how to choose another (``--port``)."""


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: no Nagle delay between a response's header and body
    # writes (with keep-alive and delayed ACKs that costs ~40 ms per request)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno != errno.EADDRINUSE:
            raise
        taken = PortInUseError(
            f"port {port} on {host} is in use (another server listens there, perhaps an earlier deniable serve "
            f"or mkdocs serve): choose another with --port, e.g. --port {port + 1 if port < 65535 else 8765}, "
            "or --port 0 for any free one"
        )
        taken.errno = errno.EADDRINUSE
        raise taken from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _server(
    surveys: Iterable[SurveySource], db_url: str, admin_token: str | None, log_level: str,
    access_log: bool, sqlite_synchronous: str = "NORMAL", relay_token: str | None = None,
    trusted_proxies: Iterable[str] = (), clock: Callable[[], float] = time.time, ohttp_keys: KeyRing | None = None,
) -> tuple[uvicorn.Server, Storage]:
    storage = Storage(db_url, sqlite_synchronous=sqlite_synchronous, clock=clock)
    app = create_app(
        storage, load_surveys(surveys), admin_token=admin_token, relay_token=relay_token,
        trusted_proxies=trusted_proxies, ohttp_keys=ohttp_keys,
    )
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
    ``relay_token`` and ``trusted_proxies`` are :func:`~deniable.server._app.create_app`'s.
    ``clock`` is the storage's (seconds since the epoch; it decides the round of a
    survey with rounds): a test passes one it can move forward. ``ohttp_keys``
    makes it an Oblivious HTTP gateway too (:func:`~deniable.server._app.create_app`).
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
        relay_token: str | None = None,
        trusted_proxies: Iterable[str] = (),
        clock: Callable[[], float] = time.time,
        ohttp_keys: KeyRing | None = None,
    ) -> None:
        self._clock = clock
        self._ohttp_keys = ohttp_keys
        self._relay_token = relay_token
        self._trusted_proxies = tuple(trusted_proxies)
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
            self._surveys, self.db_url, self._admin_token, self._log_level, self._access_log,
            relay_token=self._relay_token, trusted_proxies=self._trusted_proxies, clock=self._clock,
            ohttp_keys=self._ohttp_keys,
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
    db_url: str = DEFAULT_DB_URL,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    admin_token: str | None = None,
    *,
    log_level: str = "info",
    access_log: bool = True,
    sqlite_synchronous: str = "NORMAL",
    relay_token: str | None = None,
    trusted_proxies: Iterable[str] = (),
    ohttp_keys: KeyRing | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C / SIGTERM). Prints the base URL once listening,
    then each survey's page and results page (``GET /`` lists no surveys).

    ``admin_token=None`` reads the environment variable ``DENIABLE_ADMIN_TOKEN``
    (``relay_token=None``: ``DENIABLE_RELAY_TOKEN``).
    ``sqlite_synchronous="FULL"`` makes every acknowledged report survive a
    power cut too (``NORMAL``, the default, survives a killed server).
    ``trusted_proxies``: addresses or networks of reverse proxies whose
    ``X-Forwarded-For`` names the client (for the rate limit). ``ohttp_keys``:
    also serve as an Oblivious HTTP gateway with these keys.
    """
    loaded = load_surveys(surveys)
    server, storage = _server(loaded, db_url, admin_token, log_level, access_log, sqlite_synchronous,
                              relay_token, trusted_proxies, ohttp_keys=ohttp_keys)
    sock = _bind(host, port)
    url = _url(sock)
    lines = [f"deniable: serving on {url}"]
    for survey in loaded:
        lines.append(f"  {survey.id}: survey {url}/s/{survey.id}  results {url}/s/{survey.id}/results")
    if ohttp_keys is not None:
        lines.append(f"  oblivious HTTP gateway: {url}/.well-known/ohttp-gateway (for a relay with the relay token)")
    print("\n".join(lines), file=sys.stderr, flush=True)
    # the start-up objects (modules, surveys) never die: out of the collector's sight, a full
    # collection while a 10,000-response batch is checked does not walk them, holding every thread
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        storage.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m deniable.server SURVEY.yaml ... [--db URL] [--host H] [--port P]``.

    The admin token is read from ``DENIABLE_ADMIN_TOKEN`` and the relay token
    from ``DENIABLE_RELAY_TOKEN`` (not command-line arguments, which other
    users of the machine could see); so can the database URL, from
    ``DENIABLE_DB_URL`` (it may hold a password).
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m deniable.server", description=main.__doc__)
    parser.add_argument("surveys", nargs="*", help="survey definition files (YAML or JSON)")
    parser.add_argument("--db", default=os.environ.get("DENIABLE_DB_URL") or DEFAULT_DB_URL,
                        help=f"database URL (default: $DENIABLE_DB_URL, else {DEFAULT_DB_URL})")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"0 picks a free port (default {DEFAULT_PORT})")
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--no-access-log", action="store_true")
    parser.add_argument(
        "--trusted-proxy", action="append", default=[], metavar="ADDRESS",
        help="a reverse proxy (address or network) whose X-Forwarded-For names the client; repeatable",
    )
    parser.add_argument("--ohttp-keys", metavar="FILE", help="also be an Oblivious HTTP gateway, its keys in this "
                        "file (created if missing; rotated weekly, a day's overlap); needs deniable[ohttp]")
    args = parser.parse_args(argv)
    keys = None
    if args.ohttp_keys:
        from deniable._ohttp._keys import KeyRing

        keys = KeyRing(args.ohttp_keys)
        keys.current()
    try:
        parse_networks(args.trusted_proxy)
    except ValueError as exc:
        parser.error(f"--trusted-proxy: {exc}")
    try:
        run(
            args.surveys, db_url=args.db, host=args.host, port=args.port,
            admin_token=os.environ.get("DENIABLE_ADMIN_TOKEN") or None,
            log_level=args.log_level, access_log=not args.no_access_log,
            relay_token=os.environ.get("DENIABLE_RELAY_TOKEN") or None, trusted_proxies=args.trusted_proxy,
            ohttp_keys=keys,
        )
    except PortInUseError as exc:
        parser.exit(1, f"{parser.prog}: {exc}\n")
    return 0

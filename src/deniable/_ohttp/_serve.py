"""Run the relay: blocking (``deniable relay``) or in a background thread (tests, demos, benchmarks)."""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType

import uvicorn

from deniable._ohttp._relay import Relay, relay_app
from deniable.server._runner import _bind, _url, log_config

__all__ = ["BackgroundRelay", "run_relay"]


def _server(relay: Relay, log_level: str, access_log: bool) -> uvicorn.Server:
    config = uvicorn.Config(
        relay_app(relay), log_config=log_config(log_level, access_log), log_level=log_level,
        access_log=access_log, server_header=False, proxy_headers=False, lifespan="on",
    )
    return uvicorn.Server(config)


def run_relay(relay: Relay, host: str = "127.0.0.1", port: int = 8766, *, log_level: str = "info",
              access_log: bool = True) -> None:
    """Serve the relay until interrupted; prints its URL once listening."""
    server = _server(relay, log_level, access_log)
    sock = _bind(host, port)
    shuffling = "" if relay.shuffler is None else (
        f", shuffling batches of at least {relay.shuffler.threshold} (delay up to {relay.shuffler.max_delay:g} s)")
    print(f"deniable relay: relaying on {_url(sock)}/ to the gateway {relay.gateway}{shuffling}",
          file=sys.stderr, flush=True)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


class BackgroundRelay:
    """The relay in a background thread on a free port of ``host`` (``url`` once started)."""

    def __init__(self, relay: Relay, host: str = "127.0.0.1", port: int = 0, *, log_level: str = "warning",
                 access_log: bool = False) -> None:
        self.relay, self._host, self._port = relay, host, port
        self._log_level, self._access_log = log_level, access_log
        self._thread: threading.Thread | None = None
        self.url = ""

    def start(self) -> BackgroundRelay:
        self.server = _server(self.relay, self._log_level, self._access_log)
        self._sock = _bind(self._host, self._port)
        self.url = _url(self._sock) + "/"
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]},
                                        name="deniable-relay", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the deniable relay did not start; see the log above")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.server.should_exit = True
            self._thread.join(timeout=30)
            self._thread = None
            self._sock.close()

    def __enter__(self) -> BackgroundRelay:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

"""``deniable relay``: the Oblivious HTTP relay (needs ``deniable[server,ohttp]``).

Options come from the command line, else from a YAML or JSON config file
(``--config``), else the defaults::

    gateway: https://collector.example.org     # the collector (deniable serve --ohttp-keys)
    host: 127.0.0.1
    port: 8766
    rate_limit: {responses: 30, seconds: 600}  # per client address, or off
    trusted_proxies: [127.0.0.1]               # the relay's TLS proxy, whose X-Forwarded-For names the device
    shuffle: {threshold: 100, max_delay: 60, buffer: relay-buffer.sqlite}   # hold, shuffle, forward in batches

The relay token (``DENIABLE_RELAY_TOKEN``, the collector's) is read from the
environment only: command lines are visible to other users of the machine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from deniable.cli._common import CLIError, err

__all__ = ["relay_cmd", "RELAY_PORT", "load_relay_config"]

RELAY_PORT = 8766
"""The relay's default port: the collector's (8765) plus one."""
_FIELDS = {"gateway", "host", "port", "rate_limit", "trusted_proxies", "shuffle"}
_SHUFFLE_FIELDS = {"threshold", "max_delay", "buffer"}


def load_relay_config(path: Path | None) -> dict[str, Any]:
    """The relay's settings from a YAML or JSON file (its fields checked); ``{}`` without a file."""
    if path is None:
        return {}
    import yaml

    if not path.is_file():
        raise CLIError(f"no such config file: {path}")
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise CLIError(f"{path}: must be a mapping of settings ({', '.join(sorted(_FIELDS))})")
    extra = sorted(set(data) - _FIELDS)
    if extra:
        raise CLIError(f"{path}: {extra[0]!r} is not a relay setting (allowed: {', '.join(sorted(_FIELDS))})")
    return data


def _shuffler(configured: Any, shuffle: bool, threshold: int | None, max_delay: float | None,
              buffer: Path | None) -> Any:
    """The shuffler the settings ask for (the command line's over the config file's), or None."""
    if configured is not None and not isinstance(configured, dict):
        raise CLIError(f"shuffle: must be a mapping ({', '.join(sorted(_SHUFFLE_FIELDS))}); got {configured!r:.60}")
    extra = sorted(set(configured or {}) - _SHUFFLE_FIELDS)
    if extra:
        raise CLIError(f"shuffle.{extra[0]} is not a shuffler setting (allowed: {', '.join(sorted(_SHUFFLE_FIELDS))})")
    if not shuffle and configured is None:
        if threshold is not None or max_delay is not None or buffer is not None:
            raise CLIError("--threshold, --max-delay and --buffer need --shuffle")
        return None
    from deniable._ohttp._shuffler import Buffer, Shuffler, check_settings

    settings = configured or {}
    try:
        least = int(threshold if threshold is not None else settings.get("threshold", 100))
        delay = float(max_delay if max_delay is not None else settings.get("max_delay", 60.0))
        check_settings(least, delay)  # before the buffer's file is made
    except (TypeError, ValueError) as exc:
        raise CLIError(f"--shuffle: {exc}") from None
    kept = Buffer(buffer or settings.get("buffer", "relay-buffer.sqlite"))
    return Shuffler(kept, threshold=least, max_delay=delay)


def relay_cmd(
    gateway: Annotated[str | None, typer.Option(help="The collector's URL (it serves the gateway at "
                                                "/.well-known/ohttp-gateway: deniable serve --ohttp-keys).",
                                                show_default=False)] = None,
    host: Annotated[str | None, typer.Option(help="Interface to listen on (default 127.0.0.1).",
                                             show_default=False)] = None,
    port: Annotated[int | None, typer.Option(help=f"Port (0 picks a free one) (default {RELAY_PORT}).",
                                             show_default=False)] = None,
    rate_limit: Annotated[str | None, typer.Option(
        "--rate-limit", help="Requests per client address: RESPONSES/SECONDS, or off (default 30/600).",
        show_default=False)] = None,
    trusted_proxy: Annotated[list[str] | None, typer.Option(
        "--trusted-proxy", help="The relay's own TLS proxy (address or network) whose X-Forwarded-For names "
        "the device, for the rate limit; repeatable.")] = None,
    shuffle: Annotated[bool, typer.Option(
        "--shuffle", help="Hold the reports in a durable buffer and forward them in shuffled batches.")] = False,
    threshold: Annotated[int | None, typer.Option(
        help="--shuffle: the fewest reports a batch holds (default 100).", show_default=False)] = None,
    max_delay: Annotated[float | None, typer.Option(
        help="--shuffle: a batch waits a uniform random delay up to this many seconds (default 60).",
        show_default=False)] = None,
    buffer: Annotated[Path | None, typer.Option(
        help="--shuffle: the buffer's SQLite file (default relay-buffer.sqlite).", show_default=False)] = None,
    config: Annotated[Path | None, typer.Option(help="A YAML or JSON file of these settings.")] = None,
) -> None:
    """Run the Oblivious HTTP relay until Ctrl-C: it sees the devices' addresses, never their reports.

    Example: DENIABLE_RELAY_TOKEN=... deniable relay --gateway https://collector.example.org
    """
    try:
        from deniable._ohttp._relay import DEFAULT_RATE_LIMIT, Relay
        from deniable._ohttp._serve import run_relay
        from deniable.server._policy import load_policy
        from deniable.server._runner import PortInUseError
    except ImportError as exc:
        raise CLIError(f"the relay needs its extras: pip install 'deniable[server,ohttp]' ({exc})") from None
    settings = load_relay_config(config)
    gateway = gateway or settings.get("gateway")
    if not gateway or not str(gateway).startswith(("http://", "https://")):
        raise CLIError(f"--gateway (or gateway: in the config) must be the collector's http(s) URL; got {gateway!r}")
    limit: Any = settings.get("rate_limit", DEFAULT_RATE_LIMIT.to_json())
    if rate_limit is not None:
        responses, _, seconds = rate_limit.partition("/")
        if rate_limit != "off" and not (responses.isdigit() and seconds.replace(".", "", 1).isdigit()):
            raise CLIError(f"--rate-limit must be RESPONSES/SECONDS (e.g. 30/600) or off; got {rate_limit!r}")
        limit = "off" if rate_limit == "off" else {"responses": int(responses), "seconds": float(seconds)}
    parsed = load_policy({"rate_limit": limit}).rate_limit  # the collector's checks and messages
    token = os.environ.get("DENIABLE_RELAY_TOKEN") or None
    if token is None:
        err.print("[bold yellow]warning:[/] DENIABLE_RELAY_TOKEN is not set: the gateway will refuse what "
                  "this relay forwards")
    proxies = trusted_proxy or settings.get("trusted_proxies", [])
    shuffler = _shuffler(settings.get("shuffle"), shuffle, threshold, max_delay, buffer)
    try:
        relay = Relay(str(gateway), token, rate_limit=parsed, trusted_proxies=proxies, shuffler=shuffler)
    except ValueError as exc:
        raise CLIError(f"--trusted-proxy: {exc}") from None
    try:
        run_relay(relay, host or settings.get("host", "127.0.0.1"),
                  int(port if port is not None else settings.get("port", RELAY_PORT)))
    except PortInUseError as exc:
        raise CLIError(str(exc)) from None

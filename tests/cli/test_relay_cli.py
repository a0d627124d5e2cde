"""``deniable relay``: its settings, from the command line or a config file, refused with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("typer", reason="the command line needs the cli extra")
pytest.importorskip("pyhpke", reason="the relay needs the 'ohttp' extra")

from typer.testing import CliRunner  # noqa: E402

from deniable.cli import app  # noqa: E402


@pytest.mark.parametrize(("args", "config", "message"), [
    ([], None, "--gateway (or gateway: in the config) must be the collector's http(s) URL"),
    (["--gateway", "ftp://x"], None, "must be the collector's http(s) URL"),
    (["--gateway", "http://127.0.0.1:1", "--rate-limit", "30"], None, "--rate-limit must be RESPONSES/SECONDS"),
    (["--gateway", "http://127.0.0.1:1", "--rate-limit", "0/10"], None, "rate_limit.responses: must be an integer"),
    (["--gateway", "http://127.0.0.1:1", "--trusted-proxy", "not-an-address"], None, "--trusted-proxy"),
    ([], "gateway: http://127.0.0.1:1\nport: 8766\nshuffler: true\n", "'shuffler' is not a relay setting"),
    ([], "gateway: http://127.0.0.1:1\nshuffle: true\n", "shuffle: must be a mapping"),
    ([], "gateway: http://127.0.0.1:1\nshuffle: {delay: 3}\n", "shuffle.delay is not a shuffler setting"),
    (["--gateway", "http://127.0.0.1:1", "--threshold", "5"], None, "--threshold, --max-delay and --buffer need"),
    (["--gateway", "http://127.0.0.1:1", "--shuffle", "--threshold", "0"], None, "--shuffle: threshold must be"),
    ([], "- just a list\n", "must be a mapping of settings"),
])
def test_bad_settings_are_one_line(tmp_path: Path, args: list[str], config: str | None, message: str) -> None:
    if config is not None:
        (tmp_path / "relay.yaml").write_text(config)
        args = [*args, "--config", str(tmp_path / "relay.yaml")]
    result = CliRunner().invoke(app, ["relay", *args], env={"DENIABLE_RELAY_TOKEN": "t"})
    assert result.exit_code == 1, result.output
    assert message in result.output

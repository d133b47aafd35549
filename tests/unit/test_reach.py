"""agent.url checked before anything is sent: what is refused, and why. None of these
connects anywhere (192.0.2.1 is a documentation address)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from goose_ls.agent.transport import network
from goose_ls.agent.transport.network import NetworkEndpoint
from goose_ls.agent.transport.url_check import check_url, fingerprint, read_token
from goose_ls.errors import AgentUnavailable
from goose_ls.settings import AgentSettings


async def _refusal(**settings: Any) -> AgentUnavailable:
    with pytest.raises(AgentUnavailable) as raised:
        await check_url(AgentSettings(**settings))
    return raised.value


async def test_http_urls_are_streamable_http_and_other_schemes_are_refused() -> None:
    plain = await check_url(AgentSettings(url="http://127.0.0.1:3284/acp"))
    assert plain.http and not plain.secure and plain.address == "127.0.0.1"
    secure = await check_url(AgentSettings(url="https://192.0.2.1/acp"))
    assert secure.http and secure.secure and secure.port == 443
    assert not (await check_url(AgentSettings(url="ws://127.0.0.1:3284/acp"))).http
    refused = await _refusal(url="ftp://127.0.0.1:3284/acp")
    assert refused.reason == "unusable" and "ws://, wss://, http:// or https://" in refused.message


@pytest.mark.parametrize(
    "url", ["ws://127.0.0.1:3284/acp?token=abc", "ws://me:abc@127.0.0.1:3284/acp"]
)
async def test_a_credential_in_the_url_is_refused(url: str) -> None:
    refused = await _refusal(url=url)
    assert "carries a credential" in refused.message and "abc" not in str(refused)


async def test_loopback_names_and_addresses_go_in_clear() -> None:
    for url, address in (
        ("ws://127.0.0.1:3284/acp", "127.0.0.1"),
        ("ws://[::1]:3284/acp", "::1"),
        ("ws://localhost:3284/acp", None),
    ):
        target = await check_url(AgentSettings(url=url))
        assert not target.insecure and target.address is not None
        assert address is None or target.address == address


async def test_plain_ws_elsewhere_needs_allow_insecure() -> None:
    refused = await _refusal(url="ws://192.0.2.1:3284/acp")
    assert refused.reason == "insecure"
    target = await check_url(AgentSettings(url="ws://192.0.2.1:3284/acp", allow_insecure=True))
    assert target.insecure and target.address is None


async def test_allow_insecure_warns_before_it_connects(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_network(*_: Any) -> None:
        raise ConnectionRefusedError(111, "refused here")

    monkeypatch.setattr(network, "open_websocket", no_network)
    warned: list[str] = []
    settings = AgentSettings(url="ws://192.0.2.1:3284/acp", allow_insecure=True)
    with pytest.raises(AgentUnavailable, match="nothing answers"):
        await NetworkEndpoint(settings, {}, warned.append).open()
    assert warned and "unencrypted" in warned[0] and "192.0.2.1" in warned[0]


async def test_a_pin_needs_wss_and_a_sha256() -> None:
    refused = await _refusal(url="ws://127.0.0.1:1/acp", tls_fingerprint="AB")
    assert "not wss://" in refused.message
    with pytest.raises(AgentUnavailable, match="not a SHA-256 fingerprint"):
        fingerprint("AB:CD")
    goose_printed = ":".join(["0F"] * 32)
    assert fingerprint(goose_printed) == fingerprint("0f" * 32) == bytes([15] * 32)


def test_the_token_comes_from_the_variable_then_the_file_then_the_setting(
    tmp_path: Path,
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n")
    token_file.chmod(0o600)
    both = AgentSettings(token="from-setting", token_file=str(token_file))
    assert read_token(both, {"GOOSE_LS_AGENT_TOKEN": "from-env"}) == (
        "from-env",
        "GOOSE_LS_AGENT_TOKEN",
    )
    assert read_token(both, {})[0] == "from-file"
    assert read_token(AgentSettings(token="from-setting"), {}) == (
        "from-setting",
        "agent.token",
    )
    assert read_token(AgentSettings(), {}) == ("", "none")

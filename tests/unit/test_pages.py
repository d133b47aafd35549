"""Which pages an agent's question may open, and how the user is shown them."""

from __future__ import annotations

import pytest

from goose_ls.workspace.pages import origin, page_problem


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/sign-in?state=1",
        "http://127.0.0.1:8080/callback",
        "http://localhost/callback",
        "http://[::1]:9000/",
        "https://пример.рф/вход",
    ],
)
def test_https_and_loopback_http_may_be_asked_about(url: str) -> None:
    assert page_problem(url) is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://admin:hunter2@example.com/", "user name or password"),
        ("https://token@example.com/", "user name or password"),
        ("https://example.com@evil.example/", "user name or password"),
        ("http://example.com/", "only https"),
        ("http://10.0.0.1/", "only https"),
        ("javascript:alert(1)", "only https"),
        ("file:///etc/passwd", "only https"),
        ("data:text/html,hi", "only https"),
        ("https:///path-only", "no host"),
        ("https://example.com\u202e/moc.lapyap", "invisible"),
        ("https://exa\u200bmple.com/", "invisible"),
        ("https://example.com/\x1b[2J", "invisible"),
        ("https://example.com/a b", "spaces"),
        ("https://example.com:http/", "cannot be read"),
        ("https://example.com/" + "a" * 5000, "over 4096"),
    ],
)
def test_what_no_one_should_open_is_refused_with_its_reason(url: str, why: str) -> None:
    problem = page_problem(url)
    assert problem is not None and why in problem, problem
    assert "hunter2" not in problem


def test_the_origin_shows_a_look_alike_host_in_its_ascii_form() -> None:
    assert origin("https://EXAMPLE.com:8443/a?b") == "https://example.com:8443"
    assert origin("https://пример.рф/вход") == "https://xn--e1afmkfd.xn--p1ai"
    assert origin("https://\u0430pple.com/") == "https://xn--pple-43d.com"  # a Cyrillic a
    assert origin("http://[::1]:9000/") == "http://[::1]:9000"

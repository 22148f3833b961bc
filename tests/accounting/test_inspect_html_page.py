"""``keyspace inspect --html FILE``: one self-contained page (no network) with a
treemap of the scopes, opened in headless Chromium: a screenshot shows the
treemap, hovering a scope shows its path, keys and bytes, a real click zooms
into a scope and shows its children, with or without accounting."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _cdp import Browser
from _cli import run

import keyspace


def _store(url: str, accounting: bool) -> None:
    ks = keyspace.open(url, accounting=accounting)
    for t in range(3):
        for u in range(4):
            ks.scope(f"tenant{t}", f"users{u}").update(
                {b"k%d" % i: b"v" * (i % 50) for i in range(40 * (t + 1))}
            )
    ks.scope("tenant2")[b"own"] = b"x" * 3000
    ks.close()


def test_the_page_is_self_contained(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    _store(url, accounting=False)
    out = tmp_path / "tree.html"
    run("inspect", url, "--html", str(out))
    text = out.read_text()
    assert "counted in one scan" in text
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text), (
        "the page loads something from a network"
    )
    assert "tenant2" in text and "users3" in text


def test_a_page_and_json_together_are_refused(tmp_path: Path) -> None:
    """Before, the page was written and no JSON printed."""
    url = f"lmdb://{tmp_path}/db"
    _store(url, accounting=False)
    out = tmp_path / "tree.html"
    proc = run("inspect", url, "--html", str(out), "--json", ok=False)
    assert proc.returncode != 0 and "give one of them" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("accounting", [True, False])
def test_the_treemap_opens_zooms_and_hovers_in_chromium(tmp_path: Path, accounting: bool) -> None:
    url = f"lmdb://{tmp_path}/db"
    _store(url, accounting=accounting)
    out = tmp_path / "tree.html"
    run("inspect", url, "--html", str(out))
    assert ("counts kept by accounting" in out.read_text()) is accounting
    browser = Browser(out)
    try:
        browser.wait_for("document.querySelectorAll('#map .cell').length >= 3")
        shown = browser.evaluate("[...document.querySelectorAll('#map .cell')].map(e => e.dataset.path)")
        assert sorted(shown) == ["tenant0", "tenant1", "tenant2"]
        before = browser.screenshot(tmp_path / "before.png")
        assert before[:8] == b"\x89PNG\r\n\x1a\n" and len(before) > 5000
        # the biggest scope by bytes is drawn first: tenant2 (its own 3 kB key, and the most users)
        box = browser.evaluate(
            "(() => { const e = [...document.querySelectorAll('#map .cell.zoom')]"
            ".find(c => c.dataset.path === 'tenant2'); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2, r.width, r.height]; })()"
        )
        assert box[2] > 50 and box[3] > 50, box
        browser.mouse("mouseMoved", box[0], box[1])
        tip = browser.wait_for("document.getElementById('tip').style.display === 'block' && tip.textContent")
        assert "tenant2" in tip and "keys" in tip and "bytes" in tip
        browser.click(box[0], box[1])
        browser.wait_for("document.getElementById('map').dataset.path === 'tenant2'")
        children = browser.evaluate("[...document.querySelectorAll('#map .cell')].map(e => e.dataset.path)")
        assert sorted(children) == [
            "tenant2",
            *(f"tenant2 / users{u}" for u in range(4)),
        ]  # own keys + children
        rows = browser.evaluate(
            "[...document.querySelectorAll('#rows tr td:first-child')].map(e => e.textContent)"
        )
        assert {f"users{u}" for u in range(4)} <= set(rows)
        after = browser.screenshot(tmp_path / "after.png")
        assert after != before
        browser.click(
            *browser.evaluate(
                "(() => { const r = document.getElementById('by-keys').getBoundingClientRect();"
                " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
            )
        )
        browser.wait_for("document.getElementById('by-keys').classList.contains('on')")
        label = browser.evaluate("document.querySelector('#map .cell').textContent")
        assert not label.endswith(" B"), label  # sizes by keys: counts, not bytes
    finally:
        browser.close()

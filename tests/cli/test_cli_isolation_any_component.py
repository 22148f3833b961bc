"""The command line never reaches another scope's keys, whatever the path's
components hold, on every scheme.

Components are drawn from what attacks a path: separators of every scheme
(``!``, ``:``, ``/``, NUL, ``, ``), the CLI's own spellings (``hex:``, ``str:``,
``int:``, ``(…)``, ``"…"``), text that looks like an option (``-k``,
``--drop``), empty text, non-UTF-8 bytes as a shell passes them (surrogate
escapes), ``\\u`` escapes and long names. Each is given to the command line after
``--`` exactly as drawn. Every ``put`` either writes into the scope the
component names (the one whose stored key the scheme gives it) or is refused
without a change; ``scan`` and ``get`` then show exactly that scope's keys;
``delete --drop`` of one scope leaves every other scope's keys. The model is the
scheme itself: two paths are one scope when the scheme stores a key of theirs
at the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace.cli import main
from keyspace.cli._format import InputError, parse_path
from keyspace.cli._open import make_scheme
from keyspace.errors import KeyspaceError
from keyspace.stores import open_store

# scheme name: (options, path depth)
SCHEMES: dict[str, tuple[list[str], int]] = {
    "tuple": (["--scheme", "tuple"], 2),
    "asciihex": (["--scheme", "asciihex"], 2),
    "sublevel": (["--scheme", "sublevel"], 2),
    "scopehash": (["--scheme", "scopehash"], 1),
    "delimited": (["--separator", ":", "--depth", "1"], 1),
    "length-prefixed": (["--scheme", "length-prefixed", "--depth", "2"], 2),
}

_PIECES = [
    *["!", "!!", ":", "/", "\x00", ", ", "(", ")", '"', "\\", "hex:", "hex:00", "str:", "int:", "int:1"],
    *["bytes:", "-k", "--drop", "--", "-", "\udcff", "\udc80", "\\u0000", "\\ud800", "é", "a", "b", "~"],
    *["\x7f", " ", "\n", "none:", "x" * 300],
]
_COMPONENT = st.lists(st.sampled_from(_PIECES), max_size=4).map("".join)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    with open_store(url, readonly=True) as store:
        return list(store.scan(b"", None))


def _scheme(name: str) -> Any:
    """The scheme the command line writes with for ``name``."""
    kwargs = {"separator": ":", "depth": 1} if name == "delimited" else {}
    return make_scheme(name, writing=True, **kwargs)


def _identity(name: str, texts: list[str]) -> bytes | None:
    """The stored bytes of key ``b"zz"`` in the scope the command-line path
    ``texts`` names, or None when the CLI or the scheme refuses the path."""
    try:
        path: tuple[Any, ...] = parse_path(texts)
        return _scheme(name).encode(path, b"zz")
    except (InputError, KeyspaceError, UnicodeError):
        return None


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    paths=st.lists(st.lists(_COMPONENT, min_size=2, max_size=2), min_size=2, max_size=4),
    dropped=st.integers(min_value=0, max_value=3),
)
@pytest.mark.parametrize("name", list(SCHEMES))
def test_commands_reach_only_the_scope_they_name(
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    paths: list[list[str]],
    dropped: int,
) -> None:
    options, depth = SCHEMES[name]
    paths = [p[:depth] for p in paths]
    url = f"lmdb://{tmp_path_factory.mktemp('iso') / 'db'}"
    # the key 'zz' in every scope, with a value naming the put that wrote it
    model: dict[bytes, dict[str, str]] = {}
    for i, texts in enumerate(paths):
        before = _raw(url) if Path(url[len("lmdb://") :]).exists() else None
        for key in ("zz", f"k{i}"):
            code, _, err = _cli(capsys, "put", url, *options, "--key", key, "--value", f"v{i}", "--", *texts)
            ident = _identity(name, texts)
            if code == 0:
                assert ident is not None, (texts, err)
                model.setdefault(ident, {})[key] = f"v{i}"
            else:
                assert err.startswith("error: ") and len(err.splitlines()) == 1, err
                assert "unexpected" not in err, err
                after = _raw(url) if Path(url[len("lmdb://") :]).exists() else None
                assert after == before or (after == [] and before is None), (texts, err)
            before = _raw(url) if Path(url[len("lmdb://") :]).exists() else None
    if not model:
        return
    for texts in paths:
        ident = _identity(name, texts)
        if ident is None or ident not in model:
            continue
        want = sorted(f"{k}\t{v}" for k, v in model[ident].items())
        code, lines, err = _cli(capsys, "scan", url, *options, "--", *texts)
        assert (code, lines) == (0, want), (texts, err)
        for keys in model.values():
            for key in keys:
                if key not in model[ident]:
                    code, lines, err = _cli(capsys, "get", url, *options, "--key", key, "--", *texts)
                    assert code == 1 and lines == [] and "no key" in err, (texts, key, err)
    # drop one scope: every other scope keeps its keys
    texts = paths[dropped % len(paths)]
    ident = _identity(name, texts)
    if ident is None or ident not in model:
        return
    assert _cli(capsys, "delete", url, *options, "--drop", "--", *texts)[0] == 0
    low, high = _scheme(name).subtree_range(parse_path(texts))
    for other_texts in paths:
        other = _identity(name, other_texts)
        if other is None or other not in model:
            continue
        below = low <= other and (high is None or other < high)  # the dropped scope or one under it
        want = [] if below else sorted(f"{k}\t{v}" for k, v in model[other].items())
        code, lines, err = _cli(capsys, "scan", url, *options, "--", *other_texts)
        assert (code, lines) == (0, want), (other_texts, err)


def test_a_scopehash_name_whose_hash_another_holds_reaches_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``scope159129`` hashes like ``scope72590``: every command given it is
    refused by name, and the other scope's keys stay where they are."""
    url = f"lmdb://{tmp_path / 'db'}"
    assert (
        _cli(capsys, "put", url, "--scheme", "scopehash", "scope72590", "--key", "k", "--value", "secret")[0]
        == 0
    )
    before = _raw(url)
    for args in (
        ["scan", url, "scope159129"],
        ["get", url, "scope159129", "--key", "k"],
        ["put", url, "scope159129", "--key", "k", "--value", "mine"],
        ["delete", url, "scope159129", "--key", "k"],
        ["delete", url, "scope159129", "--drop"],
    ):
        code, lines, err = _cli(capsys, *args)
        assert code == 1 and lines == [] and "same xxh32 hash" in err, (args, err)
    assert _raw(url) == before
    assert _cli(capsys, "scan", url, "scope72590")[:2] == (0, ["k\tsecret"])

"""The command line keeps scopes apart, for every separating scheme on LMDB and LevelDB.

A store holds a target scope, a sibling whose name extends the target's and (where
the scheme nests) a child. ``scan`` with every range option prints exactly the
target's keys; ``get`` of a key only the sibling holds exits 1; read commands leave
the store byte for byte as it was; ``delete --drop`` of the target leaves the
sibling whole; refused writes (another scheme than the recorded one, a key the
scheme cannot store, keys in a LengthPrefixed branch) exit 1 with one error line
and change nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from keyspace.cli import main
from keyspace.stores import open_store

# scheme: (options, target path, sibling path, child path or None)
SCHEMES: dict[str, tuple[list[str], list[str], list[str], list[str] | None]] = {
    "tuple": ([], ["acme"], ["acme2"], ["acme", "x"]),
    "asciihex": ([], ["acme"], ["acme2"], ["acme", "x"]),
    "sublevel": ([], ["acme"], ["acme2"], ["acme", "x"]),
    "scopehash": ([], ["acme"], ["acme2"], None),
    "delimited": (["--separator", ":"], ["acme"], ["acme2"], None),
    "length-prefixed": (["--depth", "2"], ["t", "acme"], ["t", "acme2"], None),
}
ENGINES = ["lmdb", "leveldb"]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    with open_store(url) as store:
        return list(store.scan(b"", None))


def _store(capsys: pytest.CaptureFixture[str], url: str, name: str) -> list[str]:
    extra, target, sibling, child = SCHEMES[name]
    opts = ["--scheme", name, *extra]
    for path, keys, tag in ((target, ["k1", "k2", "k3"], "A"), (sibling, ["k0", "k2", "k9"], "B")):
        for key in keys:
            assert _cli(capsys, "put", url, *path, "--key", key, "--value", tag + key, *opts)[0] == 0
    if child is not None:
        assert _cli(capsys, "put", url, *child, "--key", "k5", "--value", "C", *opts)[0] == 0
    return opts


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(SCHEMES))
def test_cli_reads_and_drops_one_scope_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, name: str
) -> None:
    url = f"{engine}://{tmp_path / 'db'}"
    opts = _store(capsys, url, name)
    _, target, sibling, _ = SCHEMES[name]
    before = _raw(url)
    own = ["k1\tAk1", "k2\tAk2", "k3\tAk3"]
    for args, want in [
        ([], own),
        (["--reverse", "--limit", "2"], own[::-1][:2]),
        (["--start", "", "--stop", "zzzz"], own),
        (["--start", "k2", "--exclude-start", "--stop", "k9", "--include-stop"], own[2:]),
        (["--start", "k0", "--stop", "k2", "--include-stop"], own[:2]),
        (["--limit", "0"], []),
    ]:
        code, lines, err = _cli(capsys, "scan", url, *target, *args, *opts)
        assert (code, lines) == (0, want), (args, err)
    if name != "tuple":  # tuple prefixes are leading key elements
        code, lines, err = _cli(capsys, "scan", url, *target, "--prefix", "k", *opts)
        assert (code, lines) == (0, own), err
    code, lines, err = _cli(capsys, "get", url, *target, "--key", "k9", *opts)
    assert code == 1 and lines == [] and len(err.splitlines()) == 1
    assert _cli(capsys, "get", url, *target, "--key", "k2", *opts)[:2] == (0, ["Ak2"])
    assert _cli(capsys, "get", url, *sibling, "--key", "k2", *opts)[:2] == (0, ["Bk2"])
    assert _raw(url) == before  # reads change nothing

    assert _cli(capsys, "delete", url, *target, "--drop", *opts)[0] == 0
    code, lines, err = _cli(capsys, "scan", url, *sibling, *opts)
    assert (code, lines) == (0, ["k0\tBk0", "k2\tBk2", "k9\tBk9"]), err
    assert _cli(capsys, "scan", url, *target, *opts)[:2] == (0, [])


REFUSED: list[tuple[str, str, list[str]]] = [
    (
        "tuple",
        "another scheme than the recorded one",
        ["put", "{url}", "acme", "--key", "z", "--value", "v", "--scheme", "asciihex"],
    ),
    (
        "sublevel",
        "a key starting with the separator",
        ["put", "{url}", "acme", "--key", "!z", "--value", "v", "--scheme", "sublevel"],
    ),
    (
        "sublevel",
        "a name outside the sublevel bytes",
        ["put", "{url}", "ac me", "--key", "z", "--value", "v", "--scheme", "sublevel"],
    ),
    (
        "delimited",
        "a name holding the separator",
        ["put", "{url}", "acme:x", "--key", "z", "--value", "v", "--scheme", "delimited", "--separator", ":"],
    ),
    (
        "length-prefixed",
        "keys in a branch",
        ["put", "{url}", "t", "--key", "z", "--value", "v", "--scheme", "length-prefixed", "--depth", "2"],
    ),
    (
        "scopehash",
        "a path deeper than one name",
        ["put", "{url}", "acme", "x", "--key", "z", "--value", "v", "--scheme", "scopehash"],
    ),
    (
        "tuple",
        "a drop of a scope under another scheme",
        ["delete", "{url}", "acme", "--drop", "--scheme", "sublevel"],
    ),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("name", "args"), [(r[0], r[2]) for r in REFUSED], ids=[r[1] for r in REFUSED])
def test_cli_refused_writes_change_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, name: str, args: list[str]
) -> None:
    url = f"{engine}://{tmp_path / 'db'}"
    _store(capsys, url, name)
    before = _raw(url)
    code, lines, err = _cli(capsys, *[a.format(url=url) for a in args])
    assert code == 1 and lines == []
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    assert _raw(url) == before

"""Every bad argument of the keyspace command exits 1 with one named line that
shows the offending value and the limit, never an "unexpected" error, and leaves
the store as it was.

Found here: tuple spellings nested past Python's recursion limit (``((((…))))``
as a component or ``--key``, ``[[[…]]]`` with ``--json``) ended in "unexpected
RecursionError"; a JSON string holding a lone surrogate (``"\\ud800"``) as a
``--json`` key or value in "unexpected UnicodeEncodeError"; an ``int:`` of more
digits than Python reads said "is not an integer" and printed all the digits;
``--limit`` past ``sys.maxsize`` blamed the store ("LMDB failed …: Stop
argument for islice()").
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace.cli import main
from keyspace.stores import open_store


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    with open_store(url, readonly=True) as store:
        return list(store.scan(b"", None))


@pytest.fixture
def url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    url = f"lmdb://{tmp_path / 'db'}"
    assert _cli(capsys, "put", url, "acme", "--key", "k", "--value", "v")[0] == 0
    return url


def _refused(capsys: pytest.CaptureFixture[str], url: str, *args: str, says: tuple[str, ...]) -> str:
    before = _raw(url)
    code, out, err = _cli(capsys, *args)
    assert code == 1 and out == "", (args[:3], err)
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert "unexpected" not in err and "Traceback" not in err, err
    assert len(err) < 400, err  # the value is shown, cut, not all of it
    for word in says:
        assert word in err, err
    assert _raw(url) == before
    return err


DEEP_TUPLE = "(" * 5000 + ")" * 5000


@pytest.mark.parametrize(
    "args",
    [
        ["put", "{url}", DEEP_TUPLE, "--key", "k", "--value", "v"],
        ["put", "{url}", "acme", "--key", DEEP_TUPLE, "--value", "v"],
        ["get", "{url}", DEEP_TUPLE, "--key", "k"],
        ["scan", "{url}", "acme", "--start", DEEP_TUPLE],
        ["delete", "{url}", DEEP_TUPLE, "--drop"],
        ["put", "{url}", "(" * 101 + ")" * 101, "--key", "k", "--value", "v"],
    ],
    ids=["put-path", "put-key", "get-path", "scan-start", "drop-path", "just-over"],
)
def test_tuples_nested_past_the_limit_are_refused_by_name(
    capsys: pytest.CaptureFixture[str], url: str, args: list[str]
) -> None:
    _refused(capsys, url, *[a.format(url=url) for a in args], says=("nest deeper than the limit, 100",))


def test_tuples_nested_up_to_the_limit_are_a_scope(capsys: pytest.CaptureFixture[str], url: str) -> None:
    deep = "(" * 100 + ")" * 100
    assert _cli(capsys, "put", url, deep, "--key", "k", "--value", "deep")[0] == 0
    assert _cli(capsys, "get", url, deep, "--key", "k")[:2] == (0, "deep\n")
    assert _cli(capsys, "scan", url, "acme")[:2] == (0, "k\tv\n")


@pytest.mark.parametrize("depth", [101, 900, 3000])
def test_json_keys_nested_past_the_limit_are_refused_by_name(
    capsys: pytest.CaptureFixture[str], url: str, depth: int
) -> None:
    key = "[" * depth + "]" * depth
    _refused(capsys, url, "put", url, "acme", "--json", "--key", key, "--value", '"v"', says=("key '[[[",))


@pytest.mark.parametrize(
    ("args", "value"),
    [
        (["put", "{url}", "acme", "--json", "--key", '"k"', "--value", '"a\\ud800"'], "value"),
        (
            ["put", "{url}", "acme", "--json", "--key", '"\\ud800"', "--value", '"v"', "--scheme", "tuple"],
            None,
        ),
        (["get", "{url}", "acme", "--json", "--key", '["\\udfff"]'], None),
    ],
    ids=["value", "tuple-key", "composite-key"],
)
def test_lone_surrogates_in_json_are_refused_by_name(
    capsys: pytest.CaptureFixture[str], url: str, args: list[str], value: str | None
) -> None:
    err = _refused(capsys, url, *[a.format(url=url) for a in args], says=())
    assert "surrogate" in err


@pytest.mark.parametrize("scheme", ["asciihex", "sublevel"])
def test_lone_surrogates_in_json_keys_of_byte_schemes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scheme: str
) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    assert _cli(capsys, "put", url, "acme", "--key", "k", "--value", "v", "--scheme", scheme)[0] == 0
    args = ("put", url, "acme", "--json", "--key", '"\\ud800"', "--value", '"v"', "--scheme", scheme)
    err = _refused(capsys, url, *args, says=())
    assert "lone surrogate" in err and "\\\\ud800" in err


def test_an_integer_of_too_many_digits_names_the_limit(capsys: pytest.CaptureFixture[str], url: str) -> None:
    limit = sys.get_int_max_str_digits()
    digits = "7" * (limit + 700)
    err = _refused(capsys, url, "put", url, "int:" + digits, "--key", "k", "--value", "v", says=())
    assert f"{limit + 700:,} digits" in err and f"the limit is {limit:,}" in err
    err = _refused(capsys, url, "get", url, "acme", "--key", "int:" + digits, says=())
    assert f"the limit is {limit:,}" in err
    assert _refused(capsys, url, "get", url, "int:12x", "--key", "k", says=("'12x' is not an integer",))


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "{url}", "acme", "--limit", "{big}"],
        ["inspect", "{url}", "--levels", "{big}"],
        ["migrate", "{url}", "{url}2", "--batch", "{big}"],
        ["get", "{url}", "acme", "--key", "k", "--depth", "{big}"],
    ],
    ids=["limit", "levels", "batch", "depth"],
)
def test_counts_past_the_largest_index_are_refused_naming_it(
    capsys: pytest.CaptureFixture[str], url: str, args: list[str]
) -> None:
    big = str(sys.maxsize + 1)
    _refused(capsys, url, *[a.format(url=url, big=big) for a in args], says=(big, str(sys.maxsize)))
    assert not Path(url[len("lmdb://") :] + "2").exists()


_PIECES = st.sampled_from(
    [
        *["(", ")", ", ", '"', "\\", "int:", "hex:", "str:", "bytes:", "float:", "bool:", "uuid:", "none:"],
        *["!", ":", "/", "\x00", "\udcff", "\\ud800", "\\u0000", "a", "1", "-", "--", "é", "[", "]", "{"],
        *["}", "e9", "nan", "inf", " ", "\n", "((((", "))))"],
    ]
)
_ARG = st.lists(_PIECES, max_size=8).map("".join)
_SCHEMES = [["--scheme", "tuple"], ["--scheme", "asciihex"], ["--scheme", "sublevel"], ["--separator", ":"]]


@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    command=st.sampled_from(["put", "get", "scan", "delete"]),
    scheme=st.sampled_from(_SCHEMES),
    fmt=st.sampled_from([[], ["--json"], ["--hex"]]),
    component=_ARG,
    key=_ARG,
)
def test_any_spelling_gives_success_or_one_named_error(
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    command: str,
    scheme: list[str],
    fmt: list[str],
    component: str,
    key: str,
) -> None:
    """Whatever the component and key hold (as a shell passes them: non-UTF-8
    bytes as surrogate escapes), a command ends with 0, or with 1 and one line
    naming a library error; a command that fails leaves the store as it was."""
    url = f"sqlite://{tmp_path_factory.mktemp('fuzz') / 'db.sqlite'}"
    assert _cli(capsys, "put", url, *scheme, "seed", "--key", "k", "--value", "v")[0] == 0
    before = _raw(url)
    options = {
        "put": ["--key", key, "--value", key],
        "get": ["--key", key],
        "scan": ["--start", key],
        "delete": ["--key", key],
    }[command]
    code, _, err = _cli(capsys, command, url, *scheme, *fmt, *options, "--", component)
    assert code in (0, 1), err
    assert "unexpected" not in err and "Traceback" not in err, err
    if code == 1:
        assert err.startswith("error: ") and len(err.splitlines()) == 1, err
        assert _raw(url) == before


@pytest.mark.parametrize("component", ["-1", "-x", "--drop-all"])
def test_a_component_that_looks_like_an_option_is_refused_with_the_way_to_give_it(
    capsys: pytest.CaptureFixture[str], url: str, component: str
) -> None:
    err = _refused(capsys, url, "put", url, component, "--key", "k", "--value", "v", says=(component,))
    assert f"keyspace put URL -- {component}" in err, err
    assert _cli(capsys, "put", url, "--key", "k", "--value", "dash", "--", component)[0] == 0
    assert _cli(capsys, "get", url, "--key", "k", "--", component)[:2] == (0, "dash\n")
    assert _cli(capsys, "scan", url, "acme")[:2] == (0, "k\tv\n")

"""The C point operations of scopes (the methods of ``keyspace._scope_accel.ScopeFields``)
against their pure-Python reference (``keyspace._scope_fields.PointOps``) over
pure-Python layouts: for keys of
every type a scope may be given (those its key codec takes and those it refuses),
``[]``, ``get`` and ``[]=`` store the same bytes, return the same values and raise
the same errors, with the same arguments; and a missing key's ``KeyError``
carries the key itself as its one argument, whatever the key's type."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import uuid
from typing import Any

import pytest

import keyspace
from keyspace._scope_fields import PointOps
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes._layouts import LayoutCache
from keyspace.scope import Scope

try:
    from keyspace import _scope_accel as accel
except ImportError:  # pragma: no cover - built without a C compiler
    accel = None

pytestmark = pytest.mark.skipif(accel is None, reason="keyspace._scope_accel was not built")

PY_GETITEM = PointOps.__getitem__
PY_GET = PointOps.get
PY_SETITEM = PointOps.__setitem__


class _Bytes(bytes):
    pass


class _Int(int):
    pass


class _Str(str):
    """A str subclass that lies about equality, hashing and encoding."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 1

    def encode(self, *args: Any, **kwargs: Any) -> bytes:  # type: ignore[override]
        return b"not the text"


KEYS: list[Any] = [
    b"",
    b"a",
    b"\x00",
    b"\x00\xff",
    b"\xff",
    b"!",
    b"!x",
    b"\x01",
    b"\x00" * 3,
    bytes(range(256)),
    _Bytes(b"a"),
    "",
    "a",
    "é",
    "\x00",
    "\ud800",
    _Str("a"),
    0,
    1,
    -1,
    255,
    256,
    -129,
    2**63,
    -(2**63),
    2**64 - 1,
    2**64,
    -(2**70),
    True,
    False,
    _Int(5),
    1.0,
    -0.0,
    math.nan,
    None,
    (),
    (1,),
    ("a", b"b"),
    ((),),
    bytearray(b"a"),
    [1],
    uuid.UUID(int=3),
]
CODECS = [
    None,
    "str",
    "int",
    "json",
    "bincode:u8",
    "bincode:i16",
    "bincode:u32",
    "bincode:i64",
    "bincode:u64",
    "bincode:String",
    "bincode:bool",
]
SCHEMES: list[Scheme] = [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), ScopeHash(), Naive(True)]


def outcome(call: Any, *args: Any) -> tuple[Any, ...]:
    """What a call returns, or the type of its error and, for a KeyError, its args."""
    try:
        return ("ok", repr(call(*args)))
    except KeyError as exc:
        return ("error", KeyError, repr(exc.args))
    except Exception as exc:  # the named errors of keyspace.errors, TypeError, ...
        return ("error", type(exc))


def pair(scheme: Scheme, codec: str | None) -> tuple[keyspace.Keyspace, Scope, keyspace.Keyspace, Scope]:
    c_ks = keyspace.open("memory:", scheme=scheme)
    py_ks = keyspace.open("memory:", scheme=scheme)
    py_ks._space.layouts = LayoutCache(py_ks.scheme, accelerate=False)
    c_scope, py_scope = c_ks.scope("p", key=codec), py_ks.scope("p", key=codec)
    assert not py_scope.layout.accelerated
    return c_ks, c_scope, py_ks, py_scope


@pytest.mark.parametrize("codec", CODECS, ids=str)
@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
def test_c_point_ops_behave_as_the_python_methods_for_keys_of_every_type(
    scheme: Scheme, codec: str | None
) -> None:
    c_ks, c_scope, py_ks, py_scope = pair(scheme, codec)
    for key in KEYS:  # missing keys first, then present ones
        assert outcome(lambda k: c_scope[k], key) == outcome(PY_GETITEM, py_scope, key), key
        assert outcome(c_scope.get, key, 7) == outcome(PY_GET, py_scope, key, 7), key
    for key in KEYS:
        written = outcome(c_scope.__setitem__, key, b"v")
        assert written == outcome(PY_SETITEM, py_scope, key, b"v"), key
    assert list(c_ks.store.scan(b"", None)) == list(py_ks.store.scan(b"", None))
    for key in KEYS:
        assert outcome(lambda k: c_scope[k], key) == outcome(PY_GETITEM, py_scope, key), key
        assert outcome(c_scope.get, key) == outcome(PY_GET, py_scope, key), key


@pytest.mark.parametrize("key", [None, (), (1,), ("a", 2), ((),), (None, None)], ids=repr)
def test_a_missing_key_is_the_one_argument_of_its_key_error(key: Any) -> None:
    for codec in (None, "json"):
        scope = keyspace.open("memory:").scope("t", key=codec)
        with pytest.raises(KeyError) as caught:
            scope[key]
        assert caught.value.args == (key,)
        with pytest.raises(KeyError) as caught:
            PY_GETITEM(scope, key)
        assert caught.value.args == (key,)


_REBIND = textwrap.dedent(
    """
    import sys
    import keyspace
    from keyspace.schemes import Naive

    class Rebinding:
        \"\"\"A key codec whose first encode replaces the scope's stored-key function.\"\"\"

        name = "rebinding"
        done = False

        def encode(self, key):
            if not self.done:
                self.done = True
                object.__setattr__(scope, "_stored", lambda key: b"elsewhere")
                garbage = [bytearray(200) for _ in range(2000)]
            return key.encode()

        def decode(self, raw):
            return raw.decode()

    # the root scope of the naive scheme refuses the keyspace's records: its
    # stored-key function is a transform that only the scope holds
    ks = keyspace.open("memory:", scheme=Naive(allow_collisions=True))
    ks.scope()[b"k"] = b"old"
    scope = ks.scope(key=Rebinding())
    op = sys.argv[1]
    print(scope.get("k") if op == "get" else scope["k"])
    print(scope.get("k"))
    """
)


@pytest.mark.parametrize("op", ["get", "getitem"])
def test_a_key_codec_that_rebinds_the_stored_key_function_is_no_crash(op: str) -> None:
    """In a child process with the debug allocator (a use of freed memory crashes
    it at once): the call that began with the scope's transform finishes with it,
    as the Python method does; the next call takes the new function."""
    done = subprocess.run(
        [sys.executable, "-c", _REBIND, op],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONMALLOC": "debug"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["b'old'", "None"]

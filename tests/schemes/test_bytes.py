from hypothesis import given
from hypothesis import strategies as st

from keyspace._bytes import prefix_end


def test_prefix_end_vectors() -> None:
    assert prefix_end(b"bob") == b"boc"
    assert prefix_end(b"fo\xfe") == b"fo\xff"
    # tight: trailing ff dropped, not zeroed (CosmWasm gives b"fp\x00", one key too many)
    assert prefix_end(b"fo\xff") == b"fp"
    assert prefix_end(b"fo\xff\xff\xff") == b"fp"
    assert prefix_end(b"\xffabc") == b"\xffabd"
    assert prefix_end(b"pfx/") == b"pfx0"
    assert prefix_end(b"\xff\xff") is None
    assert prefix_end(b"") is None


@given(st.binary(max_size=8), st.binary(max_size=8))
def test_prefix_end_is_exact(prefix: bytes, key: bytes) -> None:
    end = prefix_end(prefix)
    inside = prefix <= key and (end is None or key < end)
    assert inside == key.startswith(prefix)

"""The C lock of a shared connection (``keyspace.stores._gate_accel.Mutex``)
against its reference, ``threading.Lock``: the same answers to acquire, release,
locked and ``with``; one holder at a time across threads; a thread waiting for
it lets the holder run Python code (no deadlock on the GIL); a lock dropped
while held frees what it holds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from keyspace.stores import _mutex

LOCKS: list[Callable[[], Any]] = (
    [threading.Lock] if _mutex.Mutex is threading.Lock else [_mutex.Mutex, threading.Lock]
)


@pytest.mark.parametrize("make", LOCKS)
def test_acquire_release_locked_and_with_answer_as_a_lock(make: Callable[[], Any]) -> None:
    lock = make()
    assert lock.locked() is False
    assert lock.acquire() is True
    assert lock.locked() is True
    assert lock.release() is None
    assert lock.locked() is False
    with lock as entered:
        assert entered is True
        assert lock.locked() is True
    assert lock.locked() is False
    with pytest.raises(RuntimeError, match="release unlocked lock"):
        lock.release()
    with pytest.raises(ZeroDivisionError), lock:
        1 / 0  # noqa: B018
    assert lock.locked() is False  # the block's exit released it


@pytest.mark.parametrize("make", LOCKS)
def test_one_holder_at_a_time_and_a_waiter_lets_the_holder_run(make: Callable[[], Any]) -> None:
    lock = make()
    inside = 0
    most = 0
    rounds = 2_000

    def work() -> None:
        nonlocal inside, most
        for _ in range(rounds):
            lock.acquire()
            try:
                inside += 1
                most = max(most, inside)
                sum(range(50))  # Python code under the lock: the GIL changes hands here
                inside -= 1
            finally:
                lock.release()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a thread never got the lock"
    assert most == 1 and inside == 0


@pytest.mark.parametrize("make", LOCKS)
def test_a_waiting_thread_gets_the_lock_when_it_is_released(make: Callable[[], Any]) -> None:
    lock = make()
    got = threading.Event()
    lock.acquire()

    def wait() -> None:
        with lock:
            got.set()

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.05)  # the waiter is blocked now, the GIL free for this thread
    assert not got.is_set()
    lock.release()
    assert got.wait(10), "the waiter did not get the released lock"
    thread.join(timeout=10)
    assert not lock.locked()


def test_the_c_lock_takes_no_arguments() -> None:
    if _mutex.Mutex is threading.Lock:
        pytest.skip("the optional C module is not built: threading.Lock serves")
    with pytest.raises(TypeError):
        _mutex.Mutex(1)  # type: ignore[call-arg]
    lock = _mutex.Mutex()
    with pytest.raises(TypeError):
        lock.acquire(False)  # type: ignore[call-arg]
    lock.acquire()
    del lock  # dropped while held: freed without a hang

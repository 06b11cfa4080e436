"""The frame buffer pool never hands out a buffer that a live view still refers to."""

from spark_kafkalog.protocol.frame_pool import FramePool


def test_reuse_only_without_live_views():
    pool = FramePool(max_buffers=2)
    a = pool.acquire(100_000)
    assert len(a) == 131072
    view = memoryview(a)[10:20]
    assert pool.release(a) is False  # a request field still views it
    del view
    b = pool.acquire(100_000)
    assert b is not a
    assert pool.release(b) is True
    assert pool.acquire(70_000) is b and pool.reused == 1


def test_pool_is_bounded():
    pool = FramePool(max_buffers=2)
    bufs = [pool.acquire(65536) for _ in range(3)]
    assert [pool.release(x) for x in bufs] == [True, True, False]


def test_lent_buffers_come_back_once_their_last_view_is_gone():
    pool = FramePool(max_buffers=2)
    lent = pool.lend(100_000)
    batch = memoryview(lent)[:100]  # a fetched batch kept by the caller
    assert pool.acquire(100_000) is not lent  # still viewed: a new buffer
    del batch
    assert pool.acquire(100_000) is lent and pool.reused == 1


def test_only_the_newest_lent_buffers_are_tracked():
    pool = FramePool(max_buffers=2)
    lent, views = [], []
    for _ in range(3):
        lent.append(pool.lend(65536))
        views.append(memoryview(lent[-1]))
    del views
    reused = {id(pool.acquire(65536)) for _ in range(2)}
    assert reused == {id(lent[1]), id(lent[2])}  # lent[0] was forgotten (left to the garbage collector)
    assert all(pool.acquire(65536) is not b for b in lent)


def test_take_free_never_allocates():
    pool = FramePool(max_buffers=2)
    assert pool.take_free(100_000) is None and pool.allocated == 0
    buf = pool.acquire(100_000)
    assert pool.release(buf)
    assert pool.take_free(70_000) is buf  # same size class (2**17)
    assert pool.take_free(70_000) is None


def test_pool_keeps_at_most_max_bytes_and_only_size_classes():
    pool = FramePool(max_buffers=8, max_bytes=300_000)
    a, b, c = (pool.acquire(131_072) for _ in range(3))
    assert pool.release(a) and pool.release(b)
    assert not pool.release(c)  # a third would exceed max_bytes
    assert pool.pooled_bytes == 262_144
    assert not pool.release(bytearray(100_000))  # not a size class: never pooled


def test_the_export_check_never_reallocates_a_pooled_buffer():
    """Checking a large buffer for live views must not grow it (a realloc copies all of it, per frame)."""
    import sys

    from spark_kafkalog.protocol.frame_pool import _exported

    buf = bytearray(b"x" * (1 << 20))
    allocated = sys.getsizeof(buf)
    assert not _exported(buf)
    assert sys.getsizeof(buf) == allocated and bytes(buf[-1:]) == b"x" and len(buf) == 1 << 20
    view = memoryview(buf)
    assert _exported(buf)
    view.release()
    assert not _exported(bytearray())

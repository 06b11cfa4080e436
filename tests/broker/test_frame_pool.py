"""The frame buffer pool never hands out a buffer that a live view still refers to."""

from broker.network.frame_pool import FramePool


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

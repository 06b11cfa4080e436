"""The seeds' ``Producer`` (kafka.javaapi.producer.Producer, Kafka 0.8): ``send(ProducerData | list)``, ``close``.

``producer.type=sync``: ``send`` hands the data to the event handler in the caller's thread and returns once
it was acknowledged (per ``request.required.acks``); failures raise (``FailedToSendMessageException`` after
the retries, an encoder's or partitioner's own exception at once). Concurrent ``send`` calls are serialised.

``producer.type=async``: ``send`` puts one item per message (``ProducerData`` with a single value) on a queue
of ``queue.buffering.max.messages``; when it is full, ``queue.enqueue.timeout.ms`` 0 raises
``QueueFullException`` at once, -1 blocks, > 0 blocks that long then raises. A send thread (0.8's
``ProducerSendThread``) takes items off the queue and hands a batch to the event handler when it holds
``batch.num.messages`` items or ``queue.buffering.max.ms`` passed since the last batch went out. A batch that
fails is logged and counted (``failed_batches``, ``last_error``), not retried again. ``close`` sends what is
queued (plus the callback handler's ``last_batch_before_close``), then stops the thread; a ``send`` running
when ``close`` is called is waited for, later ones raise ``ProducerClosedError``.

The event handler (``event.handler``, default ``DefaultEventHandler``) serializes, partitions and sends; the
callback handler's hooks run at the pipeline's stages (``plugins.CallbackHandler``). The plug-in interfaces
and default encoders and partitioner are re-exported from ``plugins``, ``ProducerData`` from
``producer_data``. Thread-safe.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from spark_kafkalog.client.errors import KafkaClientError, ProducerClosedError
from spark_kafkalog.legacy.event_handler import DefaultEventHandler, FailedToSendMessageException
from spark_kafkalog.legacy.plugins import (
    CallbackHandler,
    DefaultEncoder,
    DefaultPartitioner,
    Encoder,
    EventHandler,
    Partitioner,
    StringEncoder,
    load_plugin,
)
from spark_kafkalog.legacy.producer_config import ProducerConfig
from spark_kafkalog.legacy.producer_data import ProducerData

__all__ = [
    "CallbackHandler",
    "DefaultEncoder",
    "DefaultEventHandler",
    "DefaultPartitioner",
    "Encoder",
    "EventHandler",
    "FailedToSendMessageException",
    "Partitioner",
    "Producer",
    "ProducerConfig",
    "ProducerData",
    "QueueFullException",
    "StringEncoder",
]

log = logging.getLogger("kafkalog.legacy.producer")

_SHUTDOWN = object()


class QueueFullException(KafkaClientError):
    """Async mode: the event queue stayed full for ``queue.enqueue.timeout.ms``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retriable=True)


class Producer:
    """``Producer({"metadata.broker.list": "localhost:9092"})`` (see the module docstring); a context manager."""

    def __init__(self, config: Mapping[str, Any] | ProducerConfig) -> None:
        self.config = cfg = config if isinstance(config, ProducerConfig) else ProducerConfig(config)
        callbacks = cfg.callback_handler
        self.callbacks: CallbackHandler = (
            CallbackHandler() if callbacks is None else load_plugin("callback.handler", callbacks, CallbackHandler)
        )
        self.callbacks.init(cfg)
        handler = cfg.event_handler
        self.event_handler: EventHandler = (
            DefaultEventHandler() if handler is None else load_plugin("event.handler", handler, EventHandler)
        )
        init = getattr(self.event_handler, "init", None)
        if callable(init):
            init(cfg, self.callbacks)
        self.failed_batches = 0
        self.last_error: BaseException | None = None
        self._closed = False
        self._state = threading.Condition()  # guards _closed and _active_sends
        self._active_sends = 0
        self._send_lock = threading.Lock()
        self._queue: queue.Queue[Any] | None = None
        self._thread: threading.Thread | None = None
        if cfg.is_async:
            self._queue = queue.Queue(cfg.queue_buffering_max_messages)
            self._thread = threading.Thread(target=self._run, name="kafkalog-legacy-producer-send", daemon=True)
            self._thread.start()

    # sending -----------------------------------------------------------------------------------
    def send(self, data: ProducerData | Iterable[ProducerData]) -> None:
        """Send one ``ProducerData`` or a list of them (sync: acknowledged on return; async: queued)."""
        batch = [data] if isinstance(data, ProducerData) else list(data)
        for item in batch:
            if not isinstance(item, ProducerData):
                raise TypeError(f"Producer.send takes ProducerData or a list of them, got {type(item).__name__}")
        with self._state:
            if self._closed:
                raise ProducerClosedError("cannot send: the producer is closed")
            self._active_sends += 1
        try:
            if self._queue is None:
                with self._send_lock:
                    self._handle(batch)
            else:
                for item in batch:
                    for value in item.messages:
                        self._enqueue(ProducerData(item.topic, item.key, value))
        finally:
            with self._state:
                self._active_sends -= 1
                self._state.notify_all()

    def _handle(self, batch: list[ProducerData]) -> None:
        batch = self.callbacks.before_sending(batch)
        try:
            self.event_handler.handle(batch)
        except BaseException as e:
            self.callbacks.after_sending(batch, e)
            raise
        self.callbacks.after_sending(batch, None)

    def _enqueue(self, item: ProducerData) -> None:
        assert self._queue is not None
        replaced = self.callbacks.before_enqueue(item)
        if replaced is None:
            return
        timeout_ms = self.config.queue_enqueue_timeout_ms
        try:
            if timeout_ms == 0:
                self._queue.put_nowait(replaced)
            else:
                self._queue.put(replaced, timeout=None if timeout_ms < 0 else timeout_ms / 1000.0)
        except queue.Full:
            self.callbacks.after_enqueue(replaced, False)
            waited = "at once" if timeout_ms == 0 else f"after waiting {timeout_ms} ms (queue.enqueue.timeout.ms)"
            raise QueueFullException(
                f"the event queue is full ({self.config.queue_buffering_max_messages} messages, "
                f"queue.buffering.max.messages): {replaced!r} not queued {waited}"
            ) from None
        self.callbacks.after_enqueue(replaced, True)

    # the send thread ---------------------------------------------------------------------------
    def _run(self) -> None:
        assert self._queue is not None
        cfg = self.config
        linger = cfg.queue_buffering_max_ms / 1000.0
        batch: list[ProducerData] = []
        last_send = time.monotonic()
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, last_send + linger - time.monotonic()))
            except queue.Empty:
                item = None
            if item is _SHUTDOWN:
                break
            if item is not None:
                batch.append(item)
            if len(batch) >= cfg.batch_num_messages or item is None:
                if batch:
                    self._handle_async(batch, dequeued=True)
                batch = []
                last_send = time.monotonic()
        try:
            batch += self.callbacks.last_batch_before_close()
        except Exception as e:
            log.exception("callback handler's last_batch_before_close failed")
            self.last_error = e
        if batch:
            self._handle_async(batch, dequeued=True)

    def _handle_async(self, batch: list[ProducerData], *, dequeued: bool) -> None:
        try:
            if dequeued:
                batch = self.callbacks.after_dequeuing(batch)
            self._handle(batch)
        except Exception as e:
            self.failed_batches += 1
            self.last_error = e
            log.error("error handling a batch of %d events: %s", len(batch), e)

    # closing -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Send what is queued (async), stop the send thread, close the handlers. Idempotent."""
        with self._state:
            if self._closed:
                return
            self._closed = True
            while self._active_sends:  # data being queued goes out before the shutdown marker
                self._state.wait()
        try:
            if self._thread is not None:
                assert self._queue is not None
                self._queue.put(_SHUTDOWN)
                self._thread.join()
        finally:
            try:
                close = getattr(self.event_handler, "close", None)
                if callable(close):
                    close()
            finally:
                self.callbacks.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""A Spark driver for the SIGKILL tests of the exactly-once sink (run as a subprocess by test_exactly_once.py).

``python -m tests.datasource.exactly_once_driver BOOTSTRAP SOURCE SINK CHECKPOINT MODE READY_FILE`` runs
``readStream(SOURCE) -> writeStream(SINK, exactlyOnce)`` with ``Trigger.AvailableNow``. MODE:

* ``normal``: the kafkalog sink as users get it;
* ``hang-before-commit``: the driver's commit writes READY_FILE and waits forever before ending any task
  transaction (every task wrote its rows, none is committed) - the test SIGKILLs the process group then;
* ``hang-after-first-commit``: commits the first task's transaction, writes READY_FILE, waits forever.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    bootstrap, source, sink, checkpoint, mode, ready = argv
    from spark_kafkalog.datasource import kafkalog_session
    from spark_kafkalog.datasource.exactly_once import end_transactions
    from spark_kafkalog.datasource.source import KafkaLogDataSource
    from spark_kafkalog.datasource.stream_source import KafkaLogStreamWriter

    class HangingWriter(KafkaLogStreamWriter):
        def commit(self, messages, batchId):
            txns = [m.transaction for m in messages if m is not None and m.transaction.transactional_id]
            if mode == "hang-after-first-commit":
                end_transactions(self.options, txns[:1], commit=True)
            Path(ready).write_text(f"{batchId} {len(txns)}")
            while True:
                time.sleep(1)

    class HangingSink(KafkaLogDataSource):
        @classmethod
        def name(cls):
            return "kafkalog_hangs_in_commit"

        def streamWriter(self, schema, overwrite):
            writer = super().streamWriter(schema, overwrite)
            return HangingWriter(writer.options, writer.columns)

    spark = kafkalog_session("local[2]", "exactly-once-driver", conf={"spark.ui.enabled": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(HangingSink)
    query = (
        spark.readStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("value")
        .writeStream.format("kafkalog" if mode == "normal" else "kafkalog_hangs_in_commit")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("exactlyOnce", "true")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

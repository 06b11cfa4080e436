"""A Spark driver reading a share group, for the kill/restart test of test_share_streaming.py (run as a subprocess).

``python -m tests.datasource.share_driver BOOTSTRAP TOPIC GROUP CHECKPOINT OUT_DIR RUN STOP_FILE`` runs
``readStream(shareGroup=GROUP, subscribe=TOPIC) -> foreachBatch`` with a 200 ms processing-time trigger, the
driver's acknowledgements logged to ``OUT_DIR/acks-<RUN>.jsonl`` (``share_ack_log``). The sink
writes each micro-batch's rows as ``OUT_DIR/<RUN>-<batch id>.json`` (``[[partition, offset, value], ...]``,
written to a temporary name and renamed: a file is whole or absent) and then takes ``SINK_DELAY_S`` more, so
that a batch is in flight most of the time. The driver stops the query and exits 0 once STOP_FILE exists; the
test SIGKILLs its process group instead to kill it mid-stream.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

MAX_RECORDS_PER_TRIGGER = 40
SINK_DELAY_S = 0.3


def main(argv: list[str]) -> int:
    bootstrap, topic, group, checkpoint, out_dir, run, stop_file = argv
    from spark_kafkalog.datasource import kafkalog_session
    from tests.datasource.share_ack_log import logged_share_source

    spark = kafkalog_session(
        "local[2]",
        f"share-driver-{run}",
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(logged_share_source(str(Path(out_dir) / f"acks-{run}.jsonl")))

    def sink(df, batch_id: int) -> None:
        rows = [[r.partition, r.offset, r.value.decode()] for r in df.select("partition", "offset", "value").collect()]
        path = Path(out_dir) / f"{run}-{batch_id:05d}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(rows))
        os.replace(tmp, path)
        time.sleep(SINK_DELAY_S)  # a slow sink (not synchronization): the kill lands inside a batch

    query = (
        spark.readStream.format("kafkalog_share_logged")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("shareGroup", group)
        .option("maxRecordsPerTrigger", str(MAX_RECORDS_PER_TRIGGER))
        .option("shareMaxWaitMs", "200")
        .load()
        .writeStream.foreachBatch(sink)
        .trigger(processingTime="200 milliseconds")
        .option("checkpointLocation", checkpoint)
        .start()
    )
    while not Path(stop_file).exists():
        if query.awaitTermination(0.2):
            break
    error = query.exception()
    query.stop()
    spark.stop()
    if error is not None:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

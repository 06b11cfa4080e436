"""The main job (`make run`): until the Spark pipeline lands, the cluster demo of `jobs/cluster_demo.py`
(ZooKeeper plus 3 broker processes, a 6-partition topic, 100,000 records produced and consumed back)."""

from __future__ import annotations

import sys

from jobs.cluster_demo import main

if __name__ == "__main__":
    sys.exit(main([]))

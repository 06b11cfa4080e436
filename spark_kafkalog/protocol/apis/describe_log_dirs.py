"""DescribeLogDirs (key 35), v0-5; flexible from v2. Log dirs and their partitions (KIP-113).
Per partition: size, offset lag, future-replica flag; a null topic list asks for every partition. v3 adds
a top-level error code, v4 each dir's volume total and usable bytes (KIP-827), v5 whether
the dir is cordoned (KIP-1066)."""

from ..schema import declare_api

API = declare_api(
    35,
    "DescribeLogDirs",
    versions="0-5",
    flexible="2+",
    request="""
        topics                     []DescribableLogDirTopic?
          topic                    string
          partitions               []int32
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16       v3+
        results                    []DescribeLogDirsResult
          error_code               int16
          log_dir                  string
          topics                   []DescribeLogDirsTopic
            name                   string
            partitions             []DescribeLogDirsPartition
              partition_index      int32
              partition_size       int64
              offset_lag           int64
              is_future_key        bool
          total_bytes              int64       v4+ default=-1
          usable_bytes             int64       v4+ default=-1
          is_cordoned              bool        v5+ default=false
    """,
)

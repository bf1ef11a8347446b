"""Bundle split algorithms, one module per Pulsar class (``org.apache.pulsar.common.naming``),
registered by the names ``splitAlgorithmName`` takes; and BundleSplitterTask (``candidates``)."""

from lbctl.strategies.split import (
    flow_or_qps_equally_divide,
    range_equally_divide,
    specified_positions_divide,
    topic_count_equally_divide,
)

__all__ = [
    "flow_or_qps_equally_divide",
    "range_equally_divide",
    "specified_positions_divide",
    "topic_count_equally_divide",
]

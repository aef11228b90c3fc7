"""What a long MCP call tells its client: progress that rises with every notification (methods, then
model calls within one), a heartbeat when nothing changed, log lines, and a stop once cancelled."""

from __future__ import annotations

import pytest

from insight_assets.app.mcp.progress import HEARTBEAT_S, CallCancelled, CallProgress
from insight_assets.core.llm.ledger import CallProgress as ModelCalls


def test_progress_rises_with_every_notification_and_says_what_is_under_way():
    progress = CallProgress(methods=2)
    sent = [progress.due(0.0)]  # "starting"
    progress.started("insightgen")
    sent.append(progress.due(0.0))
    assert progress.due(0.0) is None  # nothing changed, and a heartbeat is not due yet
    progress.progressed("insightgen", ModelCalls(1, 4, 100, 10, 0.0))
    sent.append(progress.due(0.0))
    sent.append(progress.due(HEARTBEAT_S))  # a heartbeat: nothing new, still rising
    progress.finished("insightgen", "answered")
    progress.started("xsum")
    sent.append(progress.due(0.0))
    values = [value for value, _, _ in sent]
    assert values == sorted(values) and len(set(values)) == len(values) and values[-1] >= 1.0
    assert all(value <= progress.total == 2.0 for value in values)
    assert "insightgen: 1 of 4 model calls" in sent[2][1]
    assert sent[1][2] == ["insightgen: started"] and sent[-1][2] == ["insightgen: answered", "xsum: started"]


def test_a_cancelled_call_stops_at_its_next_step():
    progress = CallProgress(methods=5)
    progress.started("insightgen")
    progress.cancelled.set()
    with pytest.raises(CallCancelled):
        progress.progressed("insightgen", ModelCalls(1, 2, 0, 0, 0.0))
    with pytest.raises(CallCancelled):
        progress.started("contregen")

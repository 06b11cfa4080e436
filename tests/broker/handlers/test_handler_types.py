"""The handler seam is typed: a handler whose body is a stub's request class registers, and mypy rejects one
that returns something other than a response body, NO_RESPONSE or CloseConnection."""

from __future__ import annotations

from tests.mypy_snippets import mypy_lines


def test_typed_handler_registers_and_a_wrong_result_is_rejected(tmp_path):
    lines, status = mypy_lines(
        tmp_path,
        """\
        from broker.api import HandlerRegistry, RequestContext
        from broker.handlers import heartbeat
        from spark_kafkalog.protocol.apis.heartbeat import HeartbeatRequest

        registry = HandlerRegistry()
        registry.register(heartbeat.API_KEY, 0, 4, heartbeat.handle)
        reveal_type(heartbeat._API.Response)


        async def generation(ctx: RequestContext, request: HeartbeatRequest) -> int:
            return request.generation_id


        registry.register(12, 0, 4, generation)
        """,
    )
    assert lines[0] == '7: note: Revealed type is "type[spark_kafkalog.protocol.apis.heartbeat.HeartbeatResponse]"'
    assert len(lines) == 2 and lines[1].startswith('14: error: Argument 4 to "register" of "HandlerRegistry"'), lines
    assert status == 1

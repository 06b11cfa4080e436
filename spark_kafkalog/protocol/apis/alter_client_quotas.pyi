# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class AlterClientQuotasRequest(Message):
    class EntryData(Message):
        class EntityData(Message):
            entity_type: str
            entity_name: str | None
            def __init__(
                self,
                *,
                entity_type: str = ...,
                entity_name: str | None = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        class OpData(Message):
            key: str
            value: float
            remove: bool
            def __init__(
                self,
                *,
                key: str = ...,
                value: float = ...,
                remove: bool = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        entity: list[EntityData]
        ops: list[OpData]
        def __init__(
            self,
            *,
            entity: list[EntityData] = ...,
            ops: list[OpData] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    entries: list[EntryData]
    validate_only: bool
    def __init__(
        self, *, entries: list[EntryData] = ..., validate_only: bool = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class AlterClientQuotasResponse(Message):
    class EntryData(Message):
        class EntityData(Message):
            entity_type: str
            entity_name: str | None
            def __init__(
                self,
                *,
                entity_type: str = ...,
                entity_name: str | None = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        error_code: int
        error_message: str | None
        entity: list[EntityData]
        def __init__(
            self,
            *,
            error_code: int = ...,
            error_message: str | None = ...,
            entity: list[EntityData] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    entries: list[EntryData]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        entries: list[EntryData] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[AlterClientQuotasRequest, AlterClientQuotasResponse]

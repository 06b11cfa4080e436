# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeClientQuotasRequest(Message):
    class ComponentData(Message):
        entity_type: str
        match_type: int
        match: str | None
        def __init__(
            self,
            *,
            entity_type: str = ...,
            match_type: int = ...,
            match: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    components: list[ComponentData]
    strict: bool
    def __init__(
        self, *, components: list[ComponentData] = ..., strict: bool = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class DescribeClientQuotasResponse(Message):
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

        class ValueData(Message):
            key: str
            value: float
            def __init__(
                self, *, key: str = ..., value: float = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        entity: list[EntityData]
        values: list[ValueData]
        def __init__(
            self,
            *,
            entity: list[EntityData] = ...,
            values: list[ValueData] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    entries: list[EntryData] | None
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        entries: list[EntryData] | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeClientQuotasRequest, DescribeClientQuotasResponse]

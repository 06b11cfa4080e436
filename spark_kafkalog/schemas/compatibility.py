"""Confluent Schema Registry's compatibility levels over a subject's versions.

==========================  ==============================================================
level                       a new schema is accepted when
==========================  ==============================================================
NONE                        always
BACKWARD                    it can read data written with the latest version
BACKWARD_TRANSITIVE         it can read data written with every version
FORWARD                     the latest version can read data written with it
FORWARD_TRANSITIVE          every version can read data written with it
FULL                        BACKWARD and FORWARD against the latest version
FULL_TRANSITIVE             BACKWARD and FORWARD against every version
==========================  ==============================================================

Soft-deleted versions take no part (the registry passes only live ones).
"""

from __future__ import annotations

from collections.abc import Sequence

from spark_kafkalog.schemas.parsed_schema import ParsedSchema

COMPATIBILITY_LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)


def compatibility_errors(new: ParsedSchema, previous: Sequence[ParsedSchema], level: str) -> list[str]:
    """Why ``new`` may not follow ``previous`` (oldest first) at ``level``; empty when it may.

    An unknown level raises ``ValueError`` naming it."""
    level = level.upper()
    if level not in COMPATIBILITY_LEVELS:
        raise ValueError(f"unknown compatibility level {level!r}: one of {', '.join(COMPATIBILITY_LEVELS)}")
    if level == "NONE" or not previous:
        return []
    against = previous if level.endswith("_TRANSITIVE") else previous[-1:]
    errors: list[str] = []
    for old in reversed(against):  # newest first, as Confluent reports
        if level.startswith(("BACKWARD", "FULL")):
            errors.extend(new.is_backward_compatible(old))
        if level.startswith(("FORWARD", "FULL")):
            errors.extend(_roles_swapped(m) for m in old.is_backward_compatible(new))
    return list(dict.fromkeys(errors))


def _roles_swapped(message: str) -> str:
    """A FORWARD message: the check ran with the old schema as the reader, so a type's "new schema" (its reader)
    is the old one here and the other way round."""
    marker = "\0"
    return message.replace("new schema", marker).replace("old schema", "new schema").replace(marker, "old schema")

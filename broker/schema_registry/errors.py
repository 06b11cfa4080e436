"""``RegistryError``: an answer of Confluent Schema Registry's error kinds, with its HTTP status, error code and
message (the REST layer answers ``{"error_code": code, "message": message}`` with that status).

Codes (Confluent's): 40401 subject not found, 40402 version not found, 40403 schema not found, 40404 subject
soft-deleted, 40405 subject not soft-deleted, 40406 version soft-deleted, 40407 version not soft-deleted,
40408 no subject-level compatibility, 40409 no subject-level mode, 409 incompatible schema, 42201 invalid
schema, 42202 invalid version, 42203 invalid compatibility level, 42204 invalid mode, 42205 operation not
permitted, 42206 references exist, 50001 store error, 50002 timeout, 50003 forwarding error; 401/403/404/405/
415/422 generic HTTP answers use the HTTP status as the code, as Confluent's registry does.
"""

from __future__ import annotations


class RegistryError(Exception):
    """One error answer. ``http_status`` and ``error_code`` as Confluent's registry sends them."""

    def __init__(self, http_status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.error_code = error_code
        self.message = message

    def to_json(self) -> dict[str, object]:
        return {"error_code": self.error_code, "message": self.message}

    def __repr__(self) -> str:
        return f"RegistryError({self.http_status}, {self.error_code}, {self.message!r})"


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(version: object) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(detail: object = None) -> RegistryError:
    return RegistryError(404, 40403, "Schema not found" if detail is None else f"Schema {detail} not found")


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently")


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted")


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        404,
        40406,
        f"Subject '{subject}' Version {version} was soft deleted.Set permanent=true to delete permanently",
    )


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(
        404,
        40407,
        f"Subject '{subject}' Version {version} was not deleted first before being permanently deleted",
    )


def subject_level_compatibility_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")


def subject_level_mode_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")


def incompatible_schema(subject: str, details: list[str]) -> RegistryError:
    text = "[" + ", ".join(details) + "]"
    return RegistryError(
        409,
        409,
        f'Schema being registered is incompatible with an earlier schema for subject "{subject}", details: {text}',
    )


def invalid_schema(detail: str) -> RegistryError:
    return RegistryError(422, 42201, f"Invalid schema {detail}")


def invalid_version(version: object) -> RegistryError:
    return RegistryError(
        422,
        42202,
        f"The specified version '{version}' is not a valid version id. "
        'Allowed values are between [1, 2^31-1] and the string "latest"',
    )


def invalid_compatibility_level(level: object) -> RegistryError:
    return RegistryError(
        422,
        42203,
        f"Invalid compatibility level {level!s}. Valid values are none, backward, forward, full, "
        "backward_transitive, forward_transitive, and full_transitive",
    )


def invalid_mode(mode: object) -> RegistryError:
    return RegistryError(
        422, 42204, f"Invalid mode {mode!s}. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, IMPORT"
    )


def operation_not_permitted(detail: str) -> RegistryError:
    return RegistryError(422, 42205, detail)


def references_exist(detail: str) -> RegistryError:
    return RegistryError(422, 42206, f"One or more references exist to the schema {detail}.")


def store_error(detail: str) -> RegistryError:
    return RegistryError(500, 50001, f"Error in the backend data store - {detail}")


def operation_timeout(detail: str) -> RegistryError:
    return RegistryError(500, 50002, f"Operation timed out - {detail}")

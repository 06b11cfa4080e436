"""Client quotas (Kafka's ClientQuotaManager semantics): byte-rate and request-percentage quotas per
user / client-id entity, throttle times and channel muting.

``manager`` (``QuotaManager``: record, throttle times, entity updates, metrics figures), ``entity`` (entities,
precedence, quota types), ``sensor`` (Kafka's windowed rate and the throttle formula). The connection's muting is
``broker.network.throttling``."""

from .entity import QuotaEntity, QuotaType, entity_of
from .manager import ClientQuotas, QuotaManager

__all__ = ["ClientQuotas", "QuotaEntity", "QuotaManager", "QuotaType", "entity_of"]

"""KIP-848 consumer groups (the "consumer" group protocol): the pure group model (``group``: members,
epochs, target assignment, reconciliation), the server-side assignors (``assignors``), the coordinator
records they are persisted as (``records``) and their ``__consumer_offsets`` encoding (``record_codec``)."""

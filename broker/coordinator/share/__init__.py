"""Share groups (KIP-932) in the group coordinator: members, the share-group assignor and their records."""

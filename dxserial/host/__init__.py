"""Facts about this machine that advice to the user depends on (groups, permissions)."""

"""The built-in engine: a sans-I/O player, its search, where it plays, and its asyncio runner."""

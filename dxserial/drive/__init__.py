"""Programs as sans-I/O machines, and the one asyncio driver that runs them (docs/driver.md)."""

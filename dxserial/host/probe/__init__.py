"""``dxserial probe``: find a serial engine's speed and link. Open ``prober.py`` first
(sans-I/O); ``machine.py`` puts it on the one driver, ``runner.py`` runs it."""

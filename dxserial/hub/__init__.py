"""`dxserial hub`: a DXP engine as a Hub engine (the codec itself is ``protocol/hub.py``).

``adapter.py`` first, sans-I/O, with ``clock.py`` (the GAMEREQ clock a ``level`` becomes),
then ``machine.py`` (the adapter as the driver's machine) and ``runner.py``.  The built-in
engine as a Hub engine is ``dxserial/hub_engine/``; a Hub engine behind the built-in DXP
player (``dxserial engine --hub``) is the engine's: ``engine/hub_client.py``,
``engine/hub_mover.py``.
"""

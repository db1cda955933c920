"""The Hub protocol's programs, both ways (the codec itself is ``protocol/hub.py``).

A DXP engine as a Hub engine (``dxserial hub``): ``adapter.py`` first, sans-I/O, with
``clock.py`` (the GAMEREQ clock a ``level`` becomes), then ``adapter_machine.py`` and
``adapter_runner.py``. A Hub engine behind DXP (``dxserial engine
--hub``): ``client.py`` and ``process.py``. The built-in engine as a Hub engine
(``dxserial hub-engine``): ``engine.py``, ``engine_machine.py``, ``engine_runner.py``.
"""

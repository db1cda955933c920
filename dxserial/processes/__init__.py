"""Engines the director runs itself, as processes: started, watched, restarted, stopped.

Open ``endpoint.py`` first: an engine endpoint that starts its own process. ``command.py`` reads an
``[engines.NAME]`` table with a ``command``, ``supervisor.py`` decides when to start one
again, ``dos_engine.py`` runs the DOS engine in a headless DOSBox.
"""

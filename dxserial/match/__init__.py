"""A match between two engines, dxserial the initiator towards both.

Open ``machine.py`` first: one game, sans-I/O (offer, accept, play; the GAMEEND exchange in
``ending.py``, the rulings in ``rules.py``, each engine as the conductor sees it in
``engine.py``). ``runner.py`` plays a match on the one driver over ``links.py``; ``pdn.py``
saves a game; ``standings.py`` keeps the scores.
"""

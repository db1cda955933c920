"""A tournament or an SPRT test between N engines.

Open ``event.py`` first: the schedule, the scores, the crosstable and the state file,
sans-I/O. ``spec.py`` reads and checks the tournament file (every key in ``keys.py``),
``runner.py`` plays it through the match's conductor, ``sprt.py`` decides when an SPRT test
may stop, ``rating.py`` rates the field jointly (docs/ratings.md) and ``charts.py`` draws
the ratings and the SPRT's LLR as SVG.
"""

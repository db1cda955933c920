"""Games of a tournament as tasks on a Dask cluster (``cluster = "tcp://HOST:PORT"``).

:mod:`~dxserial.cluster.jobs` is the plain data a game travels as (no Dask import);
:mod:`~dxserial.cluster.play` is what a worker runs; :mod:`~dxserial.cluster.runner`
hands the games out and keeps the tournament (it imports ``distributed``, the optional
extra ``dxserial[cluster]``).  Design notes: docs/cluster.md.
"""

"""The test harness tests/ and bench/ share: real processes, ptys and sockets, driven
the way a user's programs would drive them, and the bridge in the test's own process on
an in-process cable where no process is needed.

Shipped with the package (as python-can ships its virtual bus) so that tests and bench
import it like any other module, with no path games:

* :mod:`~dxserial.testing.process`: wait on conditions; ``python -m dxserial`` as a
  process with its stdout read line by line; /proc figures of a process.
* :mod:`~dxserial.testing.fdio`: read and write a pty end with timeouts.
* :mod:`~dxserial.testing.peers`: stand-in engines: NULMODEM or NUL frames on a pty, DXP
  over TCP.
* :mod:`~dxserial.testing.standins`: engines that misbehave as real ones do (serve one
  connection, never notice a lost one, crash, hang), for the director's supervision.
* :mod:`~dxserial.testing.arbiter_standins`: followers that stretch one rule (shuffle
  kings, think past their time, claim a false win), for the arbiter's tests.
* :mod:`~dxserial.testing.rig`: ``dxserial vpair`` + ``dxserial bridge`` as processes.
* :mod:`~dxserial.testing.inproc`: a bridge in the test's own event loop on an in-process
  cable (:mod:`dxserial.sim.memory`), an engine on the cable's other end.
* :mod:`~dxserial.testing.lines`: a simulated serial line that drops, corrupts and stalls.
* :mod:`~dxserial.testing.fuzz`: the fuzz targets (needs hypothesis, a test extra).
* :mod:`~dxserial.testing.ser2net`, :mod:`~dxserial.testing.browser`: third-party
  programs (ser2net, headless Chromium) as the tests drive them.

Only :mod:`~dxserial.testing.fuzz` needs a test-only package; nothing else here imports
it, and nothing outside dxserial.testing imports dxserial.testing.
"""

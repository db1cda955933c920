"""Simulated lines: the virtual null-modem pair (``vpair``) and the UART model it samples
bytes with (``uart``); ptys and threads, not OS transports a user names as a port."""

"""The machine and its lines: serial ports, udev rules, line self-tests, the probe."""

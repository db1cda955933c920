"""The machine and its lines: serial ports, udev rules, permissions, line self-tests, the probe."""

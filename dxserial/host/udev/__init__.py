"""udev rules and systemd units for serial lines: ``files.py`` writes them, ``install.py``
installs them, ``lint.py`` checks a rules file."""

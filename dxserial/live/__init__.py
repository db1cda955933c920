"""The live web view: ``view.py`` holds what it shows, sans I/O; ``web.py`` serves it."""

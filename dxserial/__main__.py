"""Allow ``python -m dxserial``."""

from dxserial.cli import main

main()

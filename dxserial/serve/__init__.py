"""``dxserial serve``: every serial line of a host bridged by one process (docs/serve.md).

``rig``     the rig file read and checked: each line's table onto the bridge's settings
``keys``    every key of the file and what it means (``--keys``)
``line``    one line: its bridge kept running, a missing port waited for, its own logger
``daemon``  the lines of one file on one loop; a reload (SIGHUP) follows the file's changes
``status``  the status socket and its text table (``--status``)
``page``    the web page: every line's games and a row per line, on the live view
``usb``     an adapter found by its USB serial number
"""

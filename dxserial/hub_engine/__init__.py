"""`dxserial hub-engine`: the built-in engine as a Hub engine (`engine`, sans-I/O),
as the driver's machine (`machine`), and its asyncio shell (`runner`)."""

"""The sans-I/O DXP core: messages, layer-1 framings and dialogue state. No I/O here."""

"""dxserial: DamExchange (DXP) over serial lines, bridged to TCP."""

__version__ = "0.1.0"

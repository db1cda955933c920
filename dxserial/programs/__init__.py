"""Programs built from the layers: a match between engines, and the demo."""

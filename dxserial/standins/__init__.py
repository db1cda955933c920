"""Stand-in engines a user runs to test a setup (shipped): `strict` (accepts only what
DXP allows, modelled on GWD), `dialects` (the built-in engine speaking a real engine's
habit), `initiator` (an engine set up as initiator, as GWD can be)."""

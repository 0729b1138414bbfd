"""The ground floor: units, the one user-facing error, the meter and rule vocabulary, and SQL text.
Every layer may import it; it imports none of them (tests/test_layers.py)."""

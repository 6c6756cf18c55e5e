"""Benchmarks: `python -m benchmarks` (see __main__.py for the contract)."""

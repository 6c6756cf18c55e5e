"""Experiments the chapters show: each a function with explicit arguments and rng, returning data."""

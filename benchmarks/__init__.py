"""Benchmarks: ``python -m benchmarks``, from the repository root (see __main__.py for the contract).

The modules share the repository's ``tools`` package with the browser tests
(the static and Jupyter servers of ``make live``, the Chromium launch, the
working-copy builds), so that benchmarks measure exactly what the tests check.
"""

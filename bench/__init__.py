"""Benchmarks run by hand; each prints its figures."""

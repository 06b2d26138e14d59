"""Benchmarks: rxllm against the raw floor (`python -m benchmarks`)."""

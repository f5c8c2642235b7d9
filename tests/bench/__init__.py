"""Benchmarks: run each as `python -m tests.bench.<name>` from the repository root."""

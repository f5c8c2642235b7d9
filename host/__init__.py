"""Trimtab host."""

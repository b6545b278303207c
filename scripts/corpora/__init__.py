"""Offline builders for CodeSearchNet-style code search corpora (see README.md)."""

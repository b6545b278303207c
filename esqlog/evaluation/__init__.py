"""Measuring rankings: judgments and their formats, metrics with paired bootstrap,
query sets run through every mode, reports and plots.
"""

"""The calibration: what esqlog learned about one field of one index (the record, the
one-shot ``calibrate`` pass, and what esqlog keeps in the cluster).
"""

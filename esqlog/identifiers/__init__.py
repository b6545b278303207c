"""The identifiers mode: query words scored inside identifiers on a frozen ``standard``
index, from split statistics that calibrate records (settings, families, the query, its
per-shard form, the statistics and their scan, and their files).
"""

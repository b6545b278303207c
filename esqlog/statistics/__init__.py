"""What the cluster knows about a field: term statistics, search analyzers, hapax density
and vocabulary snapshots, read exactly as Lucene counts them. Reads only.
"""

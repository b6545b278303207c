"""q-log BM25 itself: the mathematics, how query text is analyzed and split, and the
query-time rewrite of match clauses (pure functions; the statistics come from below).
"""

"""``esqlog index``: a repository into one search index, one document per symbol.

walk (which files, read once), chunk (tree-sitter symbols into line ranges that tile each
file), target (the one index written: created with a marker, or refused), bulk (what
changed, and the client's streaming bulk helper). Kept apart from the query side: none of
esqlog's ranking depends on this package, which only builds the kind of index users have.
"""

"""The seam to the cluster: one view of both clients, requests as plans, and the paths they name.

Everything above talks in :class:`~esqlog.engine.steps.Request` plans that one driver runs
on a sync or an async client, so one piece of logic serves Elasticsearch and OpenSearch.
Nothing here knows about q-log or calibrations.
"""

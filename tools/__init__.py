"""Maintenance tools run by hand (make peers), never by the pipeline: they read files outside
the repository that a user's install does not have."""

"""Experiment definitions and the runner that turns them into tidy CSV.

Flow: definitions/<name>.toml -> matrix of runs -> builds from the cache
(gem5, kernel variants, disk) -> one boot checkpoint per (variant, features,
memory, cores) -> detailed runs restored from it -> stats -> results/<name>.csv.
"""

"""Build steps for the artifact's inputs: gem5, the kernel variants and the disk image.

Each builder hashes its inputs into a cache key, and finished outputs live in the
content-addressed cache (see ``cache.py``), never in the checkout.
"""

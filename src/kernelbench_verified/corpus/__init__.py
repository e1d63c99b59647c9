"""Importing published corpora of kernels, with the speedups they claim, as ordinary run folders."""

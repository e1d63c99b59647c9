"""KernelBench-Verified: honest evaluation of LLM-written GPU kernels.

Subpackages, from the stages down to the layers they share (imports only point down):
generate -> evaluate -> problems, measure, static; baseline and leaderboard beside evaluate.
"""

__version__ = "0.1.0"

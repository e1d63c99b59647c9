"""The leaderboard: find runs, score them against a baseline, and write one offline HTML page."""

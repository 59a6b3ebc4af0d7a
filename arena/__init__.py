"""The application layer: the `referee` command line and its terminal output (progress, transcripts,
summaries), on top of the referee (matches, sandbox, tournaments, store) and the leaderboard
(results, ratings, publishing). Only this layer imports both; they never import each other."""

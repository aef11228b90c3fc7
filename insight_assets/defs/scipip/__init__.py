"""SciPIP: the literature database, its keyword graph, retrievals, ideas and scores."""

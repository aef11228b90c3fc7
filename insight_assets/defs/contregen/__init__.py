"""ConTReGen: tree-structured retrieval, its answers and scores."""

"""InsightGen: the theme graph, related insights, their judge scores and the method report."""

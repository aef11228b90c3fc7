"""Themes: a collection's chunks clustered into the theme graph, and its themes kept across builds.

``clustering`` builds the theme graph (clusters linked by closeness); ``cluster_splitting`` holds
X-Means and G-Means (InsightGen, Appendix B); ``theme_updates`` carries a collection's themes from
one build to the next.
"""

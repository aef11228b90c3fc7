"""The collection's page: one self-contained HTML file of what every method made.

``collection_page`` writes it; ``headlines`` keeps what each method's report puts first;
``graph_plot`` draws the theme graph; ``markdown`` writes tables for asset metadata and reports;
``placeholder_mark`` marks a chart of placeholder numbers so that it cannot be taken for a result.
"""

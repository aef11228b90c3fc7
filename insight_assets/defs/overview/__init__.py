"""The collection's page: every method's headline and one question answered by all of them."""
